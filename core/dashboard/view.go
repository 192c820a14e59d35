package dashboard

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core"
)

// Snapshot is the JSON the dashboard's page polls (see package doc): a
// core.Snapshot with durations in milliseconds and lower-camel keys.
type Snapshot struct {
	Time          time.Time  `json:"time"` // wall clock of the server
	Resources     []Resource `json:"resources"`
	Rules         []Rule     `json:"rules"`
	Stores        []Store    `json:"stores"`
	DroppedEvents int64      `json:"droppedEvents"`
}

// Resource is a resource's statistics: over the last second, and totals.
type Resource struct {
	Name     string  `json:"name"`
	InFlight int64   `json:"inFlight"`
	Pass     int64   `json:"pass"`
	Block    int64   `json:"block"`
	Complete int64   `json:"complete"`
	Error    int64   `json:"error"`
	AvgRTMs  float64 `json:"avgRtMs"`
	MinRTMs  float64 `json:"minRtMs"`
	Peak     int64   `json:"peak"`
	Total    Totals  `json:"total"`
}

// Totals are a resource's counts since the Guard first saw it.
type Totals struct {
	Pass      int64            `json:"pass"`
	Block     int64            `json:"block"`
	Complete  int64            `json:"complete"`
	Error     int64            `json:"error"`
	BlockedBy map[string]int64 `json:"blockedBy"`
}

// Rule is a rule in force and its statistics.
type Rule struct {
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	Resource     string   `json:"resource"`
	Summary      string   `json:"summary"` // the limit, for people: "100 per 1s, leap-array"
	Blocked      int64    `json:"blocked"` // last second
	BlockedTotal int64    `json:"blockedTotal"`
	Fallbacks    int64    `json:"fallbacks"`
	InFlight     int64    `json:"inFlight"`
	Breaker      *Breaker `json:"breaker,omitempty"`
}

// Breaker is the state of a breaker rule.
type Breaker struct {
	State        string  `json:"state"` // closed, open or half-open
	Requests     int64   `json:"requests"`
	Bad          int64   `json:"bad"`
	Trips        int64   `json:"trips"`
	RetryAfterMs float64 `json:"retryAfterMs"`
}

// Store is the health of a shared store.
type Store struct {
	Name      string `json:"name"`
	Healthy   bool   `json:"healthy"`
	Errors    int64  `json:"errors"`
	Fallbacks int64  `json:"fallbacks"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// view returns the JSON form of s, taken at now.
func view(s core.Snapshot, now time.Time) Snapshot {
	out := Snapshot{Time: now.UTC(), DroppedEvents: s.DroppedEvents, Resources: []Resource{}, Rules: []Rule{}, Stores: []Store{}}
	for _, r := range s.Resources {
		t := r.Total
		blockedBy := t.BlockedBy
		if blockedBy == nil {
			blockedBy = map[string]int64{}
		}
		out.Resources = append(out.Resources, Resource{
			Name: r.Resource, InFlight: r.InFlight, Pass: r.Pass, Block: r.Block, Complete: r.Complete, Error: r.Error,
			AvgRTMs: ms(r.AvgRT()), MinRTMs: ms(r.MinRT), Peak: r.Peak,
			Total: Totals{Pass: t.Pass, Block: t.Block, Complete: t.Complete, Error: t.Error, BlockedBy: blockedBy},
		})
	}
	for _, r := range s.Rules {
		v := Rule{Name: r.Rule.Name, Kind: string(r.Rule.Kind), Resource: r.Rule.Resource, Summary: summary(r.Rule),
			Blocked: r.Blocked, BlockedTotal: r.BlockedTotal, Fallbacks: r.Fallbacks, InFlight: r.InFlight}
		if b := r.Breaker; b != nil {
			v.Breaker = &Breaker{State: b.State.String(), Requests: b.Requests, Bad: b.Bad, Trips: b.Trips, RetryAfterMs: ms(b.RetryAfter)}
		}
		out.Rules = append(out.Rules, v)
	}
	for _, st := range s.Stores {
		out.Stores = append(out.Stores, Store{Name: st.Name, Healthy: st.Healthy, Errors: st.Errors, Fallbacks: st.Fallbacks})
	}
	return out
}

// summary describes rule r's limit for people.
func summary(r core.Rule) string {
	var s string
	switch r.Kind {
	case core.KindConcurrency:
		return fmt.Sprintf("%d in flight", r.Limit)
	case core.KindBreaker:
		s = fmt.Sprintf("%s >= %v", r.Strategy, r.Threshold)
		if r.MaxRT > 0 {
			s = fmt.Sprintf("%s (> %s) >= %v", r.Strategy, r.MaxRT, r.Threshold)
		}
		return fmt.Sprintf("%s of >= %d in %s, open %s", s, r.MinRequests, r.Window, r.OpenFor)
	case core.KindHotspot:
		if r.Algorithm == "concurrency" {
			return fmt.Sprintf("%d in flight per %s", r.Limit, r.Param)
		}
		s = fmt.Sprintf("%d per %s per %s, %s", r.Limit, r.Window, r.Param, r.Algorithm)
	default:
		s = fmt.Sprintf("%d per %s, %s", r.Limit, r.Window, r.Algorithm)
	}
	if r.Store != "" {
		s += fmt.Sprintf(", store %s (%s)", r.Store, r.Mode)
	}
	return s
}
