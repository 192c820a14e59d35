package dashboard

import (
	"math"
	"strconv"
	"time"

	"github.com/sluicekit/sluice/core"
)

// snapshot is the JSON the dashboard's page polls: the package doc
// describes it, and its parts below, field by field.
type snapshot struct {
	Time          time.Time  `json:"time"`
	Resources     []resource `json:"resources"`
	Rules         []rule     `json:"rules"`
	Stores        []store    `json:"stores"`
	DroppedEvents int64      `json:"droppedEvents"`
	HistoryEnd    time.Time  `json:"historyEnd"`
	HistoryAt     int64      `json:"historyAt"`
}

// series are values per second, oldest first; null (NaN in Go) where not
// known.
type series []float64

// MarshalJSON writes s as an array of numbers, null for NaN.
func (s series) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+4*len(s))
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'f', -1, 32) // recorded as float32
	}
	return append(b, ']'), nil
}

type resource struct {
	Name     string            `json:"name"`
	InFlight int64             `json:"inFlight"`
	Pass     int64             `json:"pass"`
	Block    int64             `json:"block"`
	Complete int64             `json:"complete"`
	Error    int64             `json:"error"`
	AvgRTMs  float64           `json:"avgRtMs"`
	MinRTMs  float64           `json:"minRtMs"`
	Peak     int64             `json:"peak"`
	Total    totals            `json:"total"`
	History  map[string]series `json:"history,omitempty"`
}

type totals struct {
	Pass      int64            `json:"pass"`
	Block     int64            `json:"block"`
	Complete  int64            `json:"complete"`
	Error     int64            `json:"error"`
	RTMs      float64          `json:"rtMs"`
	AvgRTMs   float64          `json:"avgRtMs"` // RTMs / Complete; 0 when none completed
	BlockedBy map[string]int64 `json:"blockedBy"`
}

type rule struct {
	Name          string              `json:"name"`
	Kind          string              `json:"kind"`
	Resource      string              `json:"resource"`
	Summary       string              `json:"summary"` // the limit, for people: "100 per 1s, leap-array"
	Blocked       int64               `json:"blocked"` // last second
	BlockedTotal  int64               `json:"blockedTotal"`
	Fallbacks     int64               `json:"fallbacks"`
	InFlight      int64               `json:"inFlight"`
	Breaker       *breaker            `json:"breaker,omitempty"`
	Evaluated     int64               `json:"evaluated"`
	Resources     []string            `json:"resources"`
	ResourceCount int                 `json:"resourceCount"`
	Unmatched     bool                `json:"unmatched"`
	Shadow        bool                `json:"shadow"`
	Shadowed      int64               `json:"shadowed"`
	ShadowedTotal int64               `json:"shadowedTotal"`
	Algorithm     string              `json:"algorithm,omitempty"`
	WindowMs      float64             `json:"windowMs"`
	History       map[string]series   `json:"history,omitempty"` // core.RuleHistory, by series
	TopBlocked    []core.BlockedValue `json:"topBlocked,omitempty"`
}

// maxRuleResources bounds the resources listed per rule (rule.Resources).
const maxRuleResources = 10

type breaker struct {
	State        string  `json:"state"` // closed, open or half-open
	Requests     int64   `json:"requests"`
	Bad          int64   `json:"bad"`
	Trips        int64   `json:"trips"`
	RetryAfterMs float64 `json:"retryAfterMs"`
}

type store struct {
	Name      string `json:"name"`
	Healthy   bool   `json:"healthy"`
	Errors    int64  `json:"errors"`
	Fallbacks int64  `json:"fallbacks"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// view returns the JSON form of s and h, taken at now.
func view(s core.Snapshot, h core.History, now time.Time) snapshot {
	out := snapshot{Time: now.UTC(), DroppedEvents: s.DroppedEvents, Resources: []resource{}, Rules: []rule{}, Stores: []store{},
		HistoryEnd: now.Add(h.End - s.At).UTC(), HistoryAt: h.End.Milliseconds()}
	resHist := map[string]map[string]series{}
	for _, r := range h.Resources {
		resHist[r.Resource] = map[string]series{"pass": r.Pass, "block": r.Block, "error": r.Error,
			"avgRtMs": r.AvgRT, "p50RtMs": r.P50RT, "p99RtMs": r.P99RT}
	}
	ruleHist := map[string]map[string]series{}
	for _, r := range h.Rules {
		ruleHist[r.Rule] = map[string]series{"blocked": r.Blocked, "shadowed": r.Shadowed, "evaluated": r.Evaluated,
			"limit": r.Limit, "use": r.Use}
	}
	for _, r := range s.Resources {
		t := r.Total
		blockedBy := t.BlockedBy
		if blockedBy == nil {
			blockedBy = map[string]int64{}
		}
		var avg, lastAvg time.Duration
		if t.Complete > 0 {
			avg = t.RT / time.Duration(t.Complete)
		}
		if r.Complete > 0 {
			lastAvg = r.RT / time.Duration(r.Complete)
		}
		out.Resources = append(out.Resources, resource{
			Name: r.Resource, InFlight: r.InFlight, Pass: r.Pass, Block: r.Block, Complete: r.Complete, Error: r.Error,
			AvgRTMs: ms(lastAvg), MinRTMs: ms(r.MinRT), Peak: r.Peak,
			Total: totals{Pass: t.Pass, Block: t.Block, Complete: t.Complete, Error: t.Error,
				RTMs: ms(t.RT), AvgRTMs: ms(avg), BlockedBy: blockedBy},
			History: resHist[r.Resource],
		})
	}
	for _, r := range s.Rules {
		v := rule{Name: r.Rule.Name, Kind: string(r.Rule.Kind), Resource: r.Rule.Resource, Summary: r.Rule.Summary(),
			Blocked: r.Blocked, BlockedTotal: r.BlockedTotal, Fallbacks: r.Fallbacks, InFlight: r.InFlight,
			Evaluated: r.Evaluated, Resources: append([]string{}, r.Resources[:min(len(r.Resources), maxRuleResources)]...), ResourceCount: len(r.Resources),
			Unmatched: r.Unmatched, WindowMs: ms(r.Rule.Window), History: ruleHist[r.Rule.Name],
			Shadow: r.Rule.Shadow, Shadowed: r.Shadowed, ShadowedTotal: r.ShadowedTotal, Algorithm: string(r.Rule.Algorithm),
			TopBlocked: r.TopBlocked}
		if b := r.Breaker; b != nil {
			v.Breaker = &breaker{State: string(b.State), Requests: b.Requests, Bad: b.Bad, Trips: b.Trips, RetryAfterMs: ms(b.RetryAfter)}
		}
		out.Rules = append(out.Rules, v)
	}
	for _, st := range s.Stores {
		out.Stores = append(out.Stores, store{Name: st.Name, Healthy: st.Healthy, Errors: st.Errors, Fallbacks: st.Fallbacks})
	}
	return out
}
