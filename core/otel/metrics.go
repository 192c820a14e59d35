package sluiceotel

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// scopeName is the instrumentation scope of the meter Register uses and of
// the Producer's metrics; scopeVersion gives its version.
const scopeName = "github.com/sluicekit/sluice/core/otel"

// scopeVersion returns the version of this module in the program's build
// information: its tag (v0.1.0) when the program requires a release,
// "(devel)" when it is the module being built (its tests), "" when the
// program was built without module information.
func scopeVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == scopeName {
		return bi.Main.Version
	}
	for _, m := range bi.Deps {
		if m.Path == scopeName {
			return m.Version
		}
	}
	return ""
}

// The attribute keys of the instruments and of the block events.
const (
	attrResource     = attribute.Key("sluice.resource")
	attrResult       = attribute.Key("sluice.result")
	attrRule         = attribute.Key("sluice.rule.name")
	attrRuleKind     = attribute.Key("sluice.rule.kind")
	attrRuleResource = attribute.Key("sluice.rule.resource")
	attrBreakerState = attribute.Key("sluice.breaker.state")
	attrStore        = attribute.Key("sluice.store.name")
)

// resultPassed is the sluice.result of the requests a Guard admitted.
const resultPassed = "passed"

type config struct {
	mp      metric.MeterProvider
	watcher *rulesfile.Watcher
}

// Option configures Register.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// WithMeterProvider makes Register create its instruments with mp instead
// of the global MeterProvider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) error {
		if mp == nil {
			return errors.New("WithMeterProvider: provider is nil")
		}
		c.mp = mp
		return nil
	})
}

// WithWatcher adds the instruments of the reloads of w's rules file (see
// the package documentation).
func WithWatcher(w *rulesfile.Watcher) Option {
	return optionFunc(func(c *config) error {
		if w == nil {
			return errors.New("WithWatcher: watcher is nil")
		}
		c.watcher = w
		return nil
	})
}

// instruments are the observable instruments of one Register.
type instruments struct {
	requests, completed, failed               metric.Int64ObservableCounter
	responseTime                              metric.Float64ObservableCounter
	active                                    metric.Int64ObservableUpDownCounter
	ruleBlocked, ruleEvaluated, ruleFallbacks metric.Int64ObservableCounter
	ruleShadowBlocked                         metric.Int64ObservableCounter
	ruleActive, ruleResources                 metric.Int64ObservableUpDownCounter
	ruleUnmatched                             metric.Int64ObservableGauge
	breakerState                              metric.Int64ObservableUpDownCounter
	reasons                                   []string        // core.BlockReasons
	kinds                                     []core.KindInfo // core.Kinds
	breakerTrips, storeErrors, storeFallbacks metric.Int64ObservableCounter
	storeHealthy                              metric.Int64ObservableGauge
	dropped                                   metric.Int64ObservableCounter
	ruleLimit, ruleUsage                      metric.Int64ObservableGauge
	// Of the rules file (WithWatcher); w is nil without one.
	w                             *rulesfile.Watcher
	reloads                       metric.Int64ObservableCounter
	reloadSuccess, reloadDuration metric.Float64ObservableGauge
	reloadOK                      metric.Int64ObservableGauge
}

// Register creates the instruments listed in the package documentation on
// a meter of scope
// "github.com/sluicekit/sluice/core/otel" (with this module's version), and registers one callback that reads them
// all from one g.Snapshot per collection. Unregister the returned
// Registration to stop reporting g. It returns an error naming a bad
// option, or the meter's error.
func Register(g *core.Guard, opts ...Option) (metric.Registration, error) {
	if g == nil {
		return nil, errors.New("sluiceotel: Register: guard is nil")
	}
	cfg := config{}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sluiceotel: Register: nil option")
		}
		if err := o.apply(&cfg); err != nil {
			return nil, fmt.Errorf("sluiceotel: %w", err)
		}
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	m := cfg.mp.Meter(scopeName, metric.WithInstrumentationVersion(scopeVersion()))
	var (
		in   = instruments{reasons: core.BlockReasons(), kinds: core.Kinds()}
		errs []error
	)
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	upDown := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := m.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gaugeIn := func(name, unit, desc string) metric.Int64ObservableGauge {
		c, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	in.requests = counter("sluice.requests", "{request}", "Requests a Guard decided, by resource and result: passed, or the reason they were blocked for (permits, with core.WithCount).")
	in.completed = counter("sluice.completed_requests", "{request}", "Admitted requests that exited, by resource.")
	in.failed = counter("sluice.failed_requests", "{request}", "Admitted requests that exited with an error (by default 5xx, handler errors, non-OK gRPC codes), by resource.")
	var err error
	in.responseTime, err = m.Float64ObservableCounter("sluice.response.time", metric.WithUnit("s"),
		metric.WithDescription("Total response time of the completed requests, by resource; its rate divided by that of sluice.completed_requests is the average."))
	errs = append(errs, err)
	in.active = upDown("sluice.active_requests", "{request}", "Requests admitted and not yet exited, by resource.")
	in.ruleBlocked = counter("sluice.rule.blocked", "{request}", "Requests each rule blocked, since the rule was first set.")
	in.ruleShadowBlocked = counter("sluice.rule.shadow_blocked", "{request}", "Requests each shadow rule would have blocked, which passed, since the rule was first set (kept when the rule is switched into or out of shadow).")
	in.ruleEvaluated = counter("sluice.rule.evaluated", "{request}", "Requests each rule was checked against (permits, with core.WithCount), since the rule was first set.")
	in.ruleFallbacks = counter("sluice.rule.fallbacks", "{decision}", "Decisions a rule with a store made by its failure policy because the store failed.")
	in.ruleActive = upDown("sluice.rule.active_requests", "{request}", "Requests holding a slot of a concurrency rule.")
	in.ruleResources = upDown("sluice.rule.resources", "{resource}", "Resources each rule applied to since it was first set (core.OverflowResource counting as one).")
	in.ruleUnmatched = gaugeIn("sluice.rule.unmatched", "{rule}", "1 when a rule applied to no request for core.WithUnmatchedAfter since it was set or changed, else 0.")
	in.breakerState = upDown("sluice.breaker.state", "{breaker}", "State of each breaker rule: 1 for the state it is in, 0 for the others.")
	in.breakerTrips = counter("sluice.breaker.trips", "{trip}", "Times each breaker rule opened.")
	in.storeHealthy = gaugeIn("sluice.store.healthy", "{store}", "1 while a shared store works, 0 while its breaker is open: from the failure that opens it until a call succeeds again.")
	in.storeErrors = counter("sluice.store.errors", "{error}", "Calls to a shared store that failed.")
	in.storeFallbacks = counter("sluice.store.fallbacks", "{decision}", "Decisions made by failure policies instead of a shared store.")
	in.ruleLimit = gaugeIn("sluice.rule.limit", "{request}", "Each flow (in memory), concurrency and adaptive rule's limit in force: requests per window (with a token bucket's burst; a warm-up ramp's while cold), or in flight (an adaptive rule's found limit).")
	in.ruleUsage = gaugeIn("sluice.rule.usage", "{request}", "How much of sluice.rule.limit each rule has taken now: requests in its window (tokens taken, turns taken ahead), or in flight.")
	observed := []metric.Observable{in.requests, in.completed, in.failed, in.responseTime, in.active,
		in.ruleBlocked, in.ruleShadowBlocked, in.ruleEvaluated, in.ruleFallbacks, in.ruleActive, in.ruleResources, in.ruleUnmatched,
		in.ruleLimit, in.ruleUsage, in.breakerState, in.breakerTrips, in.storeHealthy, in.storeErrors, in.storeFallbacks}
	if in.w = cfg.watcher; in.w != nil {
		in.reloads = counter("sluice.rules.reloads", "{reload}", "Loads of the rules file, by sluice.result: success (applied, the first included) or failure (refused: unreadable or invalid).")
		fgauge := func(name, desc string) metric.Float64ObservableGauge {
			g, err := m.Float64ObservableGauge(name, metric.WithUnit("s"), metric.WithDescription(desc))
			errs = append(errs, err)
			return g
		}
		in.reloadSuccess = fgauge("sluice.rules.last_reload.success_timestamp", "When the rules file was last applied, in seconds since the Unix epoch.")
		in.reloadDuration = fgauge("sluice.rules.last_reload.duration", "How long the last load of the rules file took to parse it and set its rules.")
		in.reloadOK = gaugeIn("sluice.rules.last_reload.successful", "{file}", "1 while the rules in force are the rules file's, 0 while its last version is refused.")
		observed = append(observed, in.reloads, in.reloadSuccess, in.reloadDuration, in.reloadOK)
	}
	in.dropped = counter("sluice.events.dropped", "{event}", "Breaker state changes that listeners did not get because their queue was full.")
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sluiceotel: Register: %w", err)
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		in.observe(o, g.Snapshot())
		return nil
	}, append(observed, in.dropped)...)
	if err != nil {
		return nil, fmt.Errorf("sluiceotel: Register: %w", err)
	}
	return reg, nil
}

// states are the breaker states reported by sluice.breaker.state.
var states = [...]breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}

// observe reports s.
func (in *instruments) observe(o metric.Observer, s core.Snapshot) {
	attrs := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(kv...))
	}
	for _, r := range s.Resources {
		res, t := attrResource.String(r.Resource), r.Total
		o.ObserveInt64(in.requests, t.Pass, attrs(res, attrResult.String(resultPassed)))
		for _, why := range in.reasons {
			o.ObserveInt64(in.requests, t.BlockedBy[why], attrs(res, attrResult.String(why)))
		}
		one := attrs(res)
		o.ObserveInt64(in.completed, t.Complete, one)
		o.ObserveInt64(in.failed, t.Error, one)
		o.ObserveFloat64(in.responseTime, t.RT.Seconds(), one)
		o.ObserveInt64(in.active, r.InFlight, one)
	}
	for _, r := range s.Rules {
		name, kind, res := attrRule.String(valid(r.Rule.Name)), attrRuleKind.String(string(r.Rule.Kind)), attrRuleResource.String(valid(r.Rule.Resource))
		rule := attrs(name, kind, res)
		o.ObserveInt64(in.ruleBlocked, r.BlockedTotal, rule)
		if r.Rule.Shadow || r.ShadowedTotal > 0 {
			o.ObserveInt64(in.ruleShadowBlocked, r.ShadowedTotal, rule)
		}
		o.ObserveInt64(in.ruleEvaluated, r.Evaluated, rule)
		o.ObserveInt64(in.ruleResources, int64(len(r.Resources)), rule)
		o.ObserveInt64(in.ruleUnmatched, bit(r.Unmatched), rule)
		if r.Rule.Store != "" {
			o.ObserveInt64(in.ruleFallbacks, r.Fallbacks, rule)
		}
		if slices.ContainsFunc(in.kinds, func(k core.KindInfo) bool { return k.Kind == r.Rule.Kind && k.Slots }) {
			o.ObserveInt64(in.ruleActive, r.InFlight, rule)
		}
		if r.HasUse {
			o.ObserveInt64(in.ruleLimit, r.Limit, rule)
			o.ObserveInt64(in.ruleUsage, r.Use, rule)
		}
		if b := r.Breaker; b != nil {
			for _, st := range states {
				o.ObserveInt64(in.breakerState, bit(b.State == st), attrs(name, kind, res, attrBreakerState.String(string(st))))
			}
			o.ObserveInt64(in.breakerTrips, b.Trips, rule)
		}
	}
	for _, st := range s.Stores {
		store := attrs(attrStore.String(st.Name))
		o.ObserveInt64(in.storeHealthy, bit(st.Healthy), store)
		o.ObserveInt64(in.storeErrors, st.Errors, store)
		o.ObserveInt64(in.storeFallbacks, st.Fallbacks, store)
	}
	o.ObserveInt64(in.dropped, s.DroppedEvents)
	if in.w != nil {
		rs := in.w.Stats()
		o.ObserveInt64(in.reloads, rs.Reloads, attrs(attrResult.String("success")))
		o.ObserveInt64(in.reloads, rs.Failures, attrs(attrResult.String("failure")))
		o.ObserveFloat64(in.reloadSuccess, float64(rs.LastSuccess.UnixNano())/1e9)
		o.ObserveFloat64(in.reloadDuration, rs.LastDuration.Seconds())
		o.ObserveInt64(in.reloadOK, bit(!rs.Failing))
	}
}

func bit(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// valid returns s with each run of invalid UTF-8 replaced by U+FFFD:
// OpenTelemetry string attributes are UTF-8, and nothing stops a caller of
// core.Guard.Enter from naming a resource with raw bytes.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
