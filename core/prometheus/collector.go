package sluiceprom

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// defaultNamespace is the prefix of every metric name unless WithNamespace
// gives another.
const defaultNamespace = "sluice"

// Collector is a prometheus.Collector of a Guard's statistics: each scrape
// takes one core.Guard.Snapshot and reports it as the metrics listed in the
// package documentation. It is safe for concurrent use.
type Collector struct {
	g       *core.Guard
	w       *rulesfile.Watcher // nil without WithWatcher
	reasons []string           // core.BlockReasons
	kinds   []core.KindInfo    // core.Kinds
	desc    descs
}

// descs are the descriptions of the collector's metrics.
type descs struct {
	requests, completed, failed, rtSeconds, active   *prometheus.Desc
	duration                                         *prometheus.Desc
	ruleBlocked, ruleShadowBlocked                   *prometheus.Desc
	ruleFallbacks, ruleActive                        *prometheus.Desc
	ruleLimit, ruleUse                               *prometheus.Desc
	reloads, reloadSuccess, reloadOK, reloadDuration *prometheus.Desc
	ruleEvaluated, ruleResources, ruleUnmatched      *prometheus.Desc
	breakerState, breakerTrips                       *prometheus.Desc
	storeHealthy, storeErrors, storeFallbacks        *prometheus.Desc
	dropped                                          *prometheus.Desc
}

type config struct {
	namespace string
	labels    prometheus.Labels
	watcher   *rulesfile.Watcher
}

// Option configures a Collector made by NewCollector or Handler.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// nameRE matches the metric name prefixes and label names the collector
// accepts: Prometheus's classic names, which every version of it takes.
var nameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// WithNamespace makes every metric name start with ns and an underscore
// instead of "sluice". ns must be a classic Prometheus name:
// letters, digits and '_', not starting with a digit or "__" (reserved);
// no ':', which Prometheus keeps for recording rules.
func WithNamespace(ns string) Option {
	return optionFunc(func(c *config) error {
		if !nameRE.MatchString(ns) || strings.HasPrefix(ns, "__") {
			return fmt.Errorf("WithNamespace(%q): must be letters, digits and '_', not starting with a digit or \"__\"", ns)
		}
		c.namespace = ns
		return nil
	})
}

// WithConstLabels adds labels with fixed values to every metric, e.g. the
// instance's name. Label names must be valid Prometheus label names, not
// reserved (starting with "__") and not one of the collector's own
// (sluice_resource, sluice_result, sluice_rule_name, sluice_rule_kind,
// sluice_rule_resource, sluice_breaker_state, sluice_store_name); values
// must be valid UTF-8.
// Given more than once, the labels add up, a later value replacing an
// earlier one. The map is copied.
func WithConstLabels(labels prometheus.Labels) Option {
	return optionFunc(func(c *config) error {
		for name, value := range labels {
			switch {
			case !nameRE.MatchString(name) || strings.HasPrefix(name, "__"):
				return fmt.Errorf("WithConstLabels: %q is not a valid label name", name)
			case ownLabels[name]:
				return fmt.Errorf("WithConstLabels: %q is a label of the collector's own metrics", name)
			case !utf8.ValidString(value):
				return fmt.Errorf("WithConstLabels: the value of %q is not valid UTF-8: %q", name, value)
			}
		}
		if c.labels == nil {
			c.labels = prometheus.Labels{}
		}
		maps.Copy(c.labels, labels)
		return nil
	})
}

// WithWatcher adds the metrics of the reloads of w's rules file (see the
// package documentation).
func WithWatcher(w *rulesfile.Watcher) Option {
	return optionFunc(func(c *config) error {
		if w == nil {
			return errors.New("WithWatcher: watcher is nil")
		}
		c.watcher = w
		return nil
	})
}

// The variable labels of the metrics: the attributes of package
// github.com/sluicekit/sluice/core/otel as its Prometheus exporter names
// them (dots become underscores).
const (
	labelResource     = "sluice_resource"
	labelResult       = "sluice_result"
	labelRule         = "sluice_rule_name"
	labelRuleKind     = "sluice_rule_kind"
	labelRuleResource = "sluice_rule_resource"
	labelBreakerState = "sluice_breaker_state"
	labelStore        = "sluice_store_name"
)

// ownLabels are the variable labels the collector uses.
var ownLabels = map[string]bool{labelResource: true, labelResult: true, labelRule: true, labelRuleKind: true,
	labelRuleResource: true, labelBreakerState: true, labelStore: true}

// ruleLabels are the labels of the metrics of a rule.
var ruleLabels = []string{labelRule, labelRuleKind, labelRuleResource}

// resultPassed is the sluice_result of the requests a Guard admitted.
const resultPassed = "passed"

// NewCollector returns a Collector of g's statistics, or an error naming a
// bad option.
func NewCollector(g *core.Guard, opts ...Option) (*Collector, error) {
	if g == nil {
		return nil, errors.New("sluiceprom: NewCollector: guard is nil")
	}
	cfg := config{namespace: defaultNamespace}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sluiceprom: NewCollector: nil option")
		}
		if err := o.apply(&cfg); err != nil {
			return nil, fmt.Errorf("sluiceprom: %w", err)
		}
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(cfg.namespace+"_"+name, help, labels, cfg.labels)
	}
	rule := func(name, help string, more ...string) *prometheus.Desc {
		return d(name, help, append(slices.Clip(ruleLabels), more...)...)
	}
	return &Collector{g: g, w: cfg.watcher, reasons: core.BlockReasons(), kinds: core.Kinds(), desc: descs{
		requests:          d("requests_total", "Requests a Guard decided, by resource and result: passed, or the reason they were blocked for: the kind of the rule that blocked them (flow, concurrency, hotspot, breaker, adaptive, system), fallback for a failure policy of a rule whose store failed, cancelled for waits whose context ended (permits, with core.WithCount).", labelResource, labelResult),
		completed:         d("completed_requests_total", "Admitted requests that exited, by resource.", labelResource),
		failed:            d("failed_requests_total", "Admitted requests that exited with an error (by default 5xx, handler errors, non-OK gRPC codes), by resource.", labelResource),
		rtSeconds:         d("response_time_seconds_total", "Total response time of the completed requests, by resource, in seconds; divide its rate by that of completed_requests_total for the average.", labelResource),
		active:            d("active_requests", "Requests admitted and not yet exited, by resource.", labelResource),
		duration:          d("request_duration_seconds", "Response times of the completed requests, by resource: classic buckets at powers of 4 from 2^-15 s (about 30µs) to 32 s, and native buckets of schema 0 (powers of 2) for scrapers that ask for them.", labelResource),
		ruleBlocked:       rule("rule_blocked_total", "Requests each rule blocked, since the rule was first set."),
		ruleShadowBlocked: rule("rule_shadow_blocked_total", "Requests each shadow rule would have blocked, which passed, since the rule was first set (kept when the rule is switched into or out of shadow)."),
		ruleFallbacks:     rule("rule_fallbacks_total", "Decisions a rule with a store made by its failure policy because the store failed."),
		ruleActive:        rule("rule_active_requests", "Requests holding a slot of a concurrency rule."),
		ruleLimit:         rule("rule_limit", "Each flow (in memory), concurrency and adaptive rule's limit in force: requests per window (with a token bucket's burst; a warm-up ramp's while cold), or in flight (an adaptive rule's found limit)."),
		ruleUse:           rule("rule_usage", "How much of rule_limit each rule has taken now: requests in its window (tokens taken, turns taken ahead), or in flight."),
		reloads:           d("rules_reloads_total", "Loads of the rules file, by result: success (applied, the first included) or failure (refused: unreadable or invalid).", labelResult),
		reloadSuccess:     d("rules_last_reload_success_timestamp_seconds", "When the rules file was last applied, in seconds since the Unix epoch."),
		reloadOK:          d("rules_last_reload_successful", "1 while the rules in force are the rules file's, 0 while its last version is refused."),
		reloadDuration:    d("rules_last_reload_duration_seconds", "How long the last load of the rules file took to parse it and set its rules."),
		ruleEvaluated:     rule("rule_evaluated_total", "Requests each rule was checked against (permits, with core.WithCount), since the rule was first set."),
		ruleResources:     rule("rule_resources", "Resources each rule applied to since it was first set (core.OverflowResource counting as one)."),
		ruleUnmatched:     rule("rule_unmatched", "1 when a rule applied to no request for core.WithUnmatchedAfter since it was set or changed, else 0."),
		breakerState:      rule("breaker_state", "State of each breaker rule: 1 for the state it is in, 0 for the others.", labelBreakerState),
		breakerTrips:      rule("breaker_trips_total", "Times each breaker rule opened."),
		storeHealthy:      d("store_healthy", "1 while a shared store works, 0 while its breaker is open: from the failure that opens it until a call succeeds again.", labelStore),
		storeErrors:       d("store_errors_total", "Calls to a shared store that failed.", labelStore),
		storeFallbacks:    d("store_fallbacks_total", "Decisions made by failure policies instead of a shared store.", labelStore),
		dropped:           d("events_dropped_total", "Breaker state changes that listeners did not get because their queue was full."),
	}}, nil
}

// Describe sends the descriptions of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	d := &c.desc
	for _, x := range []*prometheus.Desc{d.requests, d.completed, d.failed, d.rtSeconds, d.active, d.duration,
		d.ruleBlocked, d.ruleShadowBlocked, d.ruleFallbacks, d.ruleActive, d.ruleLimit, d.ruleUse,
		d.ruleEvaluated, d.ruleResources, d.ruleUnmatched, d.breakerState, d.breakerTrips,
		d.storeHealthy, d.storeErrors, d.storeFallbacks, d.dropped} {
		ch <- x
	}
	if c.w != nil {
		for _, x := range []*prometheus.Desc{d.reloads, d.reloadSuccess, d.reloadOK, d.reloadDuration} {
			ch <- x
		}
	}
}

// states are the breaker states reported by breaker_state.
var states = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}

// Collect takes a snapshot of the Guard and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.g.Snapshot()
	d := &c.desc
	emit := func(desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
		for i, l := range labels {
			labels[i] = labelValue(l)
		}
		m, err := prometheus.NewConstMetric(desc, typ, v, labels...)
		if err != nil {
			// Not expected: the label values are valid UTF-8 and their
			// number is right. The registry reports the error for this
			// series rather than the scrape panicking.
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	for _, r := range s.Resources {
		t := r.Total
		emit(d.requests, counter, float64(t.Pass), r.Resource, resultPassed)
		for _, why := range c.reasons {
			emit(d.requests, counter, float64(t.BlockedBy[why]), r.Resource, why)
		}
		emit(d.completed, counter, float64(t.Complete), r.Resource)
		emit(d.failed, counter, float64(t.Error), r.Resource)
		emit(d.rtSeconds, counter, t.RT.Seconds(), r.Resource)
		emit(d.active, gauge, float64(r.InFlight), r.Resource)
		m, err := durationMetric(d.duration, &t.RTHistogram, t.RT.Seconds(), r.Resource)
		if err != nil {
			m = prometheus.NewInvalidMetric(d.duration, err) // not expected, as for emit
		}
		ch <- m
	}
	for _, r := range s.Rules {
		name, kind, res := r.Rule.Name, string(r.Rule.Kind), r.Rule.Resource
		emit(d.ruleBlocked, counter, float64(r.BlockedTotal), name, kind, res)
		if r.Rule.Shadow || r.ShadowedTotal > 0 {
			emit(d.ruleShadowBlocked, counter, float64(r.ShadowedTotal), name, kind, res)
		}
		emit(d.ruleEvaluated, counter, float64(r.Evaluated), name, kind, res)
		emit(d.ruleResources, gauge, float64(len(r.Resources)), name, kind, res)
		unmatched := 0.0
		if r.Unmatched {
			unmatched = 1
		}
		emit(d.ruleUnmatched, gauge, unmatched, name, kind, res)
		if r.Rule.Store != "" {
			emit(d.ruleFallbacks, counter, float64(r.Fallbacks), name, kind, res)
		}
		if slices.ContainsFunc(c.kinds, func(k core.KindInfo) bool { return k.Kind == r.Rule.Kind && k.Slots }) {
			emit(d.ruleActive, gauge, float64(r.InFlight), name, kind, res)
		}
		if r.HasUse {
			emit(d.ruleLimit, gauge, float64(r.Limit), name, kind, res)
			emit(d.ruleUse, gauge, float64(r.Use), name, kind, res)
		}
		if b := r.Breaker; b != nil {
			for _, st := range states {
				v := 0.0
				if b.State == st {
					v = 1
				}
				emit(d.breakerState, gauge, v, name, kind, res, string(st))
			}
			emit(d.breakerTrips, counter, float64(b.Trips), name, kind, res)
		}
	}
	for _, st := range s.Stores {
		healthy := 0.0
		if st.Healthy {
			healthy = 1
		}
		emit(d.storeHealthy, gauge, healthy, st.Name)
		emit(d.storeErrors, counter, float64(st.Errors), st.Name)
		emit(d.storeFallbacks, counter, float64(st.Fallbacks), st.Name)
	}
	emit(d.dropped, counter, float64(s.DroppedEvents))
	if c.w != nil {
		rs := c.w.Stats()
		emit(d.reloads, counter, float64(rs.Reloads), "success")
		emit(d.reloads, counter, float64(rs.Failures), "failure")
		emit(d.reloadSuccess, gauge, float64(rs.LastSuccess.UnixNano())/1e9)
		ok := 1.0
		if rs.Failing {
			ok = 0
		}
		emit(d.reloadOK, gauge, ok)
		emit(d.reloadDuration, gauge, rs.LastDuration.Seconds())
	}
}

// labelValue returns s as a label value: as it is when it is valid UTF-8
// (quotes, backslashes and newlines included: the exposition escapes
// them), else with each run of invalid bytes replaced by U+FFFD, which
// Prometheus would otherwise refuse, failing the series or the whole
// scrape. Rule names and resources are usually valid UTF-8, but nothing
// stops a caller of core.Guard.Enter from naming a resource with raw
// bytes.
func labelValue(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Handler returns an http.Handler serving g's metrics in the Prometheus
// exposition formats, from a registry of its own holding only a Collector of
// g, for a service that has no registry of its own. Mount it at /metrics.
func Handler(g *core.Guard, opts ...Option) (http.Handler, error) {
	c, err := NewCollector(g, opts...)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("sluiceprom: %w", err)
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), nil
}
