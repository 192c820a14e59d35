package sluiceenvoy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluicekit/sluice/core"
)

// Server is Envoy's rate limit service (envoy.service.ratelimit.v3) on a
// core.Guard: it decides each descriptor of a request with the Guard's
// rules, which it sets from its Config. Register it on a grpc.Server; it is
// safe for concurrent use.
type Server struct {
	rlsv3.UnimplementedRateLimitServiceServer
	g  *core.Guard
	o  options
	mu sync.Mutex // serializes SetConfig and the addition of override rules
	st atomic.Pointer[state]
}

// state is a Config compiled: read by requests, replaced whole.
type state struct {
	domains map[string]*domain
	// ruleDomains are the domains the sluice rules name (the text of
	// their resources before the first '/'), rulePrefixes the starts of
	// domains of rules whose resource has a '*' before any '/'.
	ruleDomains  map[string]bool
	rulePrefixes []string
	// patterns are the resources of the sluice rules, split on '*'.
	patterns  [][]string
	rules     []core.Rule // of the Config, compiled domains' first
	limits    int         // the rules of the compiled domains, the first of rules
	overrides map[override]string
	overRules []core.Rule
	stats     map[string]*leafStats    // by rule name
	files     [32]byte                 // Config.files
	waits     map[string]time.Duration // the MaxWait of the rules with one, by name
	// enforced are the names of the rules the Guard enforces, those not
	// in shadow mode; shadowAll is true when the Guard makes every rule a
	// shadow rule (core.WithShadow), the rules of overrides too.
	enforced  map[string]bool
	shadowAll bool
}

// override is a limit a request's descriptor gives (its limit field).
type override struct {
	rpu    uint32
	window time.Duration
}

// New returns a Server that decides with g, which it gives the rules of c
// (replacing g's own). It returns an error naming every problem of c, or of
// an option. Make g with core.WithShadowQuotas for shadow_mode limits to
// report their limit and remaining count, as the reference server does.
func New(g *core.Guard, c Config, opts ...Option) (*Server, error) {
	if g == nil {
		return nil, errors.New("sluiceenvoy: New: nil *core.Guard")
	}
	s := &Server{g: g, o: options{maxOverrides: defaultMaxOverrides, maxDescriptors: defaultMaxDescriptors}}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sluiceenvoy: New: nil Option")
		}
		if err := o.apply(&s.o); err != nil {
			return nil, err
		}
	}
	if err := s.SetConfig(c); err != nil {
		return nil, err
	}
	return s, nil
}

// Register registers s on srv as the envoy.service.ratelimit.v3
// RateLimitService.
func (s *Server) Register(srv grpc.ServiceRegistrar) {
	rlsv3.RegisterRateLimitServiceServer(srv, s)
}

// Guard returns the Guard s decides with.
func (s *Server) Guard() *core.Guard { return s.g }

// SetConfig replaces the config s serves, atomically: when c or its rules
// have a problem it returns an error naming each and keeps the config in
// force. The counts of limits that c keeps (same domain, same descriptor
// path, same kind) carry over, as core.Guard.SetRules keeps them.
func (s *Server) SetConfig(c Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.st.Load()
	var prev map[string]*leafStats
	if old != nil {
		prev = old.stats
	}
	doms, rules, stats, err := compile(c.Domains, s.o.defaults, prev)
	if err != nil {
		return err
	}
	st := &state{domains: doms, ruleDomains: map[string]bool{}, stats: stats, files: c.files}
	for _, r := range c.Rules {
		if r.Kind == core.KindBreaker {
			return fmt.Errorf("rule %s: kind breaker never opens here: a ShouldRateLimit call ends at once, with no outcome of the service behind Envoy", core.Quote(r.Name))
		}
		res := r.Resource
		star := strings.IndexByte(res, '*')
		slash := strings.IndexByte(res, '/')
		switch {
		case slash <= 0:
			// Without a '/' it would match no descriptor of a domain of
			// sluice rules, and could match the limits of the config's
			// domains and the overrides, whose resources have none; with
			// an empty domain, no request's.
			return fmt.Errorf("rule %s: resource %s: a resource of sluice rules is a domain and keys joined by '/' (api/user, api/*, */* for every descriptor of every domain of sluice rules), so that it limits no descriptor of another domain", core.Quote(r.Name), core.Quote(res))
		case star >= 0 && star < slash:
			st.rulePrefixes = append(st.rulePrefixes, res[:star])
		case doms[res[:slash]] != nil:
			// Its domain's descriptors are decided by the limits of its
			// envoyproxy/ratelimit file: the rule would never apply.
			return fmt.Errorf("rule %s: resource %s: domain %s has an envoyproxy/ratelimit config file, whose limits alone decide its descriptors; limit it there, or name another domain", core.Quote(r.Name), core.Quote(res), core.Quote(res[:slash]))
		default:
			st.ruleDomains[res[:slash]] = true
			keys := strings.Split(res[slash+1:], "/")
			if star < 0 && slices.Contains(keys, "") {
				return fmt.Errorf("rule %s: resource %s has an empty key, which no descriptor has: the rule would limit none", core.Quote(r.Name), core.Quote(res))
			}
			if star < 0 && r.Kind == core.KindHotspot && !slices.Contains(keys, r.Param) &&
				(r.OnMissing == "" || r.OnMissing == core.MissingSkip) {
				return fmt.Errorf("rule %s: param %s is no key of the descriptors of %s (%s): the rule would limit none of them", core.Quote(r.Name), core.Quote(r.Param), core.Quote(res), strings.Join(keys, ", "))
			}
		}
		st.patterns = append(st.patterns, strings.Split(res, "*"))
	}
	st.rules, st.limits, st.waits = append(rules, c.Rules...), len(rules), map[string]time.Duration{}
	for _, r := range c.Rules {
		if r.MaxWait > 0 {
			st.waits[r.Name] = r.MaxWait
		}
	}
	if old != nil {
		st.overrides, st.overRules = old.overrides, old.overRules
	}
	if err := st.setRules(s.g); err != nil {
		return err
	}
	s.st.Store(st)
	return nil
}

// setRules gives g the rules of st, the config's and the overrides', and
// notes which g enforces.
func (st *state) setRules(g *core.Guard) error {
	all := append(st.rules[:len(st.rules):len(st.rules)], st.overRules...)
	if err := g.SetRules(all); err != nil {
		return err
	}
	set := make(map[string]bool, len(all)) // the rules set in shadow mode
	for _, r := range all {
		set[r.Name] = r.Shadow
	}
	st.enforced, st.shadowAll = make(map[string]bool, len(all)), false
	for _, r := range g.Rules() {
		st.enforced[r.Name] = !r.Shadow
		st.shadowAll = st.shadowAll || (r.Shadow && !set[r.Name])
	}
	return nil
}

// enforces reports whether a rule that is not in shadow mode may limit a
// descriptor of req: one of the limits of its domain, a sluice rule whose
// resource may name its domain, or the rule of a limit override, which is
// never in shadow mode (as in the reference server) unless every rule is.
func (st *state) enforces(req *rlsv3.RateLimitRequest) bool {
	if !st.shadowAll && slices.ContainsFunc(req.Descriptors, func(d *ratelimitv3.RateLimitDescriptor) bool { return d.GetLimit() != nil }) {
		return true
	}
	dom := st.domains[req.Domain]
	rules := st.rules[st.limits:]
	if dom != nil {
		rules = dom.rules
	}
	return slices.ContainsFunc(rules, func(r core.Rule) bool {
		d, _, _ := strings.Cut(r.Resource, "/")
		star := strings.IndexByte(d, '*')
		return st.enforced[r.Name] && (dom != nil || d == req.Domain || (star >= 0 && strings.HasPrefix(req.Domain, d[:star])))
	})
}

// known reports whether domain has a config.
func (st *state) known(domain string) bool {
	if st.ruleDomains[domain] {
		return true
	}
	for _, p := range st.rulePrefixes {
		if strings.HasPrefix(domain, p) {
			return true
		}
	}
	return false
}

// matched reports whether a sluice rule matches resource, as core matches
// it: a resource no rule matches is not entered, so that it makes no
// resource of the Guard.
func (st *state) matched(resource string) bool {
	for _, p := range st.patterns {
		if wildcardMatch(p, resource) {
			return true
		}
		// A pattern starting with '/' also matches a method, a space
		// and a name it matches (core.Rule.Resource).
		if i := strings.IndexByte(resource, ' '); i > 0 && strings.HasPrefix(p[0], "/") && wildcardMatch(p, resource[i+1:]) {
			return true
		}
	}
	return false
}

// errMaxOverrides is overrideRule's error when o would be one override
// more than WithMaxOverrides allows.
var errMaxOverrides = errors.New("too many overrides")

// overrideRule returns the resource of the rule of o, adding it to the
// Guard's rules when it is new.
func (s *Server) overrideRule(o override) (string, error) {
	if name, ok := s.st.Load().overrides[o]; ok {
		return name, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st.Load()
	if name, ok := st.overrides[o]; ok {
		return name, nil
	}
	if len(st.overrides) >= s.o.maxOverrides {
		return "", errMaxOverrides
	}
	// No '/': no resource of sluice rules matches it (see SetConfig).
	name := "override:" + strconv.FormatUint(uint64(o.rpu), 10) + "-per-" + strconv.FormatInt(int64(o.window/time.Second), 10) + "s"
	r := s.o.defaults
	r.Name, r.Resource, r.Kind, r.Param = name, name, core.KindHotspot, descriptorParam
	r.Limit, r.Window = int64(o.rpu), o.window
	next := *st
	next.overrides = make(map[override]string, len(st.overrides)+1)
	for k, v := range st.overrides {
		next.overrides[k] = v
	}
	next.overrides[o] = name
	next.overRules = append(st.overRules[:len(st.overRules):len(st.overRules)], r)
	if err := next.setRules(s.g); err != nil {
		return "", status.Errorf(codes.InvalidArgument, "descriptor limit override: %v", err) // its limit and window are the request's
	}
	s.st.Store(&next)
	return name, nil
}

// check is what one descriptor of a request asks for.
type check struct {
	leaf     *leaf  // envoy config limit, nil for a rules domain or none
	resource string // "" when nothing limits the descriptor
	params   core.Params
	limit    *rlsv3.RateLimitResponse_RateLimit // of an override
	cost     int64
	// value and entries are what params points to.
	value   descriptorValue
	entries entryParams
}

// reply is the memory of the answer to a request, allocated at once: the
// response, what it holds for a request of one descriptor (Envoy's most
// common; requests of more make their slices), and the scratch of the
// decisions.
type reply struct {
	resp    rlsv3.RateLimitResponse
	slots   []slot       // by descriptor
	quotas  []core.Quota // of a decision (core.WithQuotas)
	blocked *core.BlockedError
	buf     [192]byte // where params and header values are built

	ptrs1     [1]*rlsv3.RateLimitResponse_DescriptorStatus
	slots1    [1]slot
	quotas1   [2]core.Quota
	admitted1 [1]core.Quota
	hdrPtrs   [4]*corev3.HeaderValue
	hdrs      [4]corev3.HeaderValue
}

// slot is what a reply holds for a descriptor: its status, with the
// messages the status points to, and its check.
type slot struct {
	status rlsv3.RateLimitResponse_DescriptorStatus
	reset  durationpb.Duration
	limit  rlsv3.RateLimitResponse_RateLimit
	check  check
}

// newReply returns the reply to a request of n descriptors.
func newReply(n int) *reply {
	r := &reply{}
	if n == 1 {
		r.resp.Statuses, r.slots = r.ptrs1[:], r.slots1[:]
	} else {
		r.resp.Statuses, r.slots = make([]*rlsv3.RateLimitResponse_DescriptorStatus, n), make([]slot, n)
	}
	r.resp.OverallCode = rlsv3.RateLimitResponse_OK
	for i := range r.slots {
		r.slots[i].status.Code = rlsv3.RateLimitResponse_OK
		r.resp.Statuses[i] = &r.slots[i].status
	}
	return r
}

// header adds a response header.
func (r *reply) header(k, v string) {
	hs := r.resp.ResponseHeadersToAdd
	if hs == nil {
		hs = r.hdrPtrs[:0]
	}
	var h *corev3.HeaderValue
	if len(hs) < len(r.hdrs) {
		h = &r.hdrs[len(hs)]
	} else {
		h = new(corev3.HeaderValue)
	}
	h.Key, h.Value = k, v
	r.resp.ResponseHeadersToAdd = append(hs, h)
}

// ShouldRateLimit decides every descriptor of req and answers OVER_LIMIT if
// a rule rejects any of them (see the package documentation).
func (s *Server) ShouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	if req.GetDomain() == "" {
		return nil, status.Error(codes.InvalidArgument, "rate limit request: domain must not be empty")
	}
	if len(req.GetDescriptors()) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "rate limit request for domain %s: no descriptors", core.Quote(req.Domain))
	}
	st := s.st.Load()
	dom := st.domains[req.Domain]
	if dom == nil && !st.known(req.Domain) {
		if s.o.unknownOK {
			return s.allOK(req), nil
		}
		return nil, status.Errorf(codes.NotFound, "rate limit request: unknown domain %s: no config file has it", core.Quote(req.Domain))
	}
	if n := len(req.Descriptors); n > s.o.maxDescriptors {
		if !st.enforces(req) {
			return s.allOK(req), nil // shadow mode: nothing refuses
		}
		return refused(req, "max-descriptors", s.o.maxDescriptors, fmt.Sprintf("the request has %d descriptors, more than the %d the rate limit service decides (sluiceenvoy.WithMaxDescriptors, sluice-rls -max-descriptors)", n, s.o.maxDescriptors)), nil
	}
	r := newReply(len(req.Descriptors))
	var replaced map[string]bool
	for i, d := range req.Descriptors {
		c := &r.slots[i].check
		if err := validDescriptor(i, d, dom == nil); err != nil {
			return nil, err
		}
		c.cost = int64(max(1, req.HitsAddend))
		if h := d.GetHitsAddend(); h != nil {
			if h.Value == 0 || h.Value > math.MaxInt32 {
				return nil, status.Errorf(codes.InvalidArgument,
					"descriptor %d: hits_addend %d: sluice takes from 1 to %d (0, to check without counting, is not supported)", i, h.Value, math.MaxInt32)
			}
			c.cost = int64(h.Value)
		}
		switch {
		case d.GetLimit() != nil:
			o, lim, err := overrideOf(i, d.Limit)
			if err != nil {
				return nil, err
			}
			if c.resource, err = s.overrideRule(o); errors.Is(err, errMaxOverrides) && st.shadowAll {
				continue // its rule would be a shadow rule: OK, without limit
			} else if errors.Is(err, errMaxOverrides) {
				return refused(req, "max-overrides", s.o.maxOverrides, fmt.Sprintf("descriptor %d: limit override %d per %s: the server already has %d distinct overrides, the most it takes (sluiceenvoy.WithMaxOverrides, sluice-rls -max-overrides)", i, o.rpu, o.window, s.o.maxOverrides)), nil
			} else if err != nil {
				return nil, err
			}
			c.limit = lim
			c.value.v = string(appendValue(r.buf[:0], req.Domain, d.Entries, nil))
			c.params = &c.value
		case dom != nil:
			l, shares := dom.match(d.Entries)
			if l == nil {
				continue
			}
			c.leaf = l
			for _, name := range l.rl.Replaces {
				if replaced == nil {
					replaced = map[string]bool{}
				}
				replaced[name] = true
			}
			if l.resource == "" {
				continue
			}
			c.resource = l.resource
			if l.hotspot {
				c.value.v = string(appendValue(r.buf[:0], "", d.Entries, shares))
				c.params = &c.value
			}
		default:
			// The count of resources is bounded (core.WithMaxResources),
			// not their length: a client would mint long ones.
			if c.resource = rulesResource(req.Domain, d.Entries); len(c.resource) > maxRulesResource {
				return nil, status.Errorf(codes.InvalidArgument, "descriptor %d: its resource, the domain and keys, is %d bytes, more than the %d of a rule's resource", i, len(c.resource), maxRulesResource)
			}
			if !st.matched(c.resource) {
				c.resource = "" // OK, without limit
				continue
			}
			c.entries = d.Entries
			c.params = &c.entries
		}
	}
	// Envoy lets a request through once its timeout, the call's deadline,
	// passed (unless failure_mode_deny): a wait for a turn after it ends
	// before, as OVER_LIMIT.
	ectx := ctx
	if d, ok := ctx.Deadline(); ok && len(st.waits) > 0 {
		var cancel context.CancelFunc
		ectx, cancel = context.WithDeadline(ctx, d.Add(-time.Until(d)/4))
		defer cancel()
	}
	resp := &r.resp
	admitted := r.admitted1[:0]
	var blocked []*core.BlockedError
	for i := range r.slots {
		sl := &r.slots[i]
		c, ds := &sl.check, &sl.status
		switch {
		case c.leaf != nil && c.leaf.rl.Unlimited:
			ds.LimitRemaining = math.MaxUint32
			continue
		case c.resource == "" || (c.leaf != nil && c.leaf.rl.Name != "" && replaced[c.leaf.rl.Name]):
			continue
		}
		r.quotas = r.quotas1[:0]
		opts := [3]core.EnterOption{core.WithCount(c.cost), core.WithQuotas(&r.quotas)}
		n := 2
		if c.params != nil {
			opts[2], n = core.WithParams(c.params), 3
		}
		e, err := s.g.Enter(ectx, c.resource, opts[:n]...)
		e.Exit(nil)
		var q core.Quota // of the current limit
		switch {
		case err == nil:
			if len(r.quotas) == 0 { // no rate rule applied
				continue
			}
			q = closest(r.quotas)
			admitted = append(admitted, q)
			ds.LimitRemaining = clampU32(q.Remaining)
			ds.DurationUntilReset = setDuration(&sl.reset, q.Reset)
			if c.leaf != nil {
				ls := c.leaf.stats
				ls.totalHits.Add(uint64(c.cost))
				ls.within.Add(uint64(c.cost))
				ls.nearLimit.Add(nearHits(q, c.cost))
			}
		case errors.As(err, &r.blocked):
			b := r.blocked
			if c.leaf != nil {
				c.leaf.stats.totalHits.Add(uint64(c.cost))
				c.leaf.stats.overLimit.Add(uint64(c.cost))
			}
			blocked = append(blocked, b)
			ds.Code = rlsv3.RateLimitResponse_OVER_LIMIT
			resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
			ds.DurationUntilReset = setDuration(&sl.reset, b.RetryAfter)
			q = core.Quota{Limit: b.Limit, Window: b.Window}
		case ctx.Err() != nil:
			return nil, status.FromContextError(ctx.Err()).Err()
		case ectx.Err() != nil: // its turn after the deadline, given back
			b := st.lateTurn(c.resource, r.quotas)
			blocked = append(blocked, b)
			ds.Code, resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT, rlsv3.RateLimitResponse_OVER_LIMIT
			ds.DurationUntilReset = setDuration(&sl.reset, b.RetryAfter)
			q = core.Quota{Limit: b.Limit, Window: b.Window}
		default:
			return nil, status.Errorf(codes.Internal, "descriptor %d: %v", i, err)
		}
		switch l := &sl.limit; {
		case c.limit != nil:
			ds.CurrentLimit = c.limit
		case c.leaf != nil:
			l.Name, l.RequestsPerUnit, l.Unit = c.leaf.rl.Name, c.leaf.rl.RequestsPerUnit, c.leaf.rl.Unit.enum()
			ds.CurrentLimit = l
		default:
			ds.CurrentLimit = limitOf(l, q)
		}
	}
	s.addHeaders(r, admitted, blocked)
	return resp, nil
}

// lateTurn is the rejection of a request of resource whose turn came after
// Envoy's deadline, given back, whose rules admitted it with the quotas qs
// (core.WithQuotas): by the one of them with the longest MaxWait, its turn
// at most that far (not known closer), after which it may pass.
func (st *state) lateTurn(resource string, qs []core.Quota) *core.BlockedError {
	b := &core.BlockedError{Resource: resource, Kind: core.KindFlow, Policies: slices.Clone(qs)}
	for i := range b.Policies {
		if w := st.waits[b.Policies[i].Rule]; w > b.RetryAfter {
			q := &b.Policies[i]
			b.Rule, b.Limit, b.Window, b.RetryAfter = q.Rule, q.Limit, q.Window, w
			q.Blocked, q.Remaining, q.Reset = true, 0, w
		}
	}
	if b.Rule == "" { // no quota of a waiting rule noted: the longest wait of all
		for name, w := range st.waits {
			if w > b.RetryAfter {
				b.Rule, b.RetryAfter = name, w
			}
		}
	}
	return b
}

// setDuration sets d to x and returns it.
func setDuration(d *durationpb.Duration, x time.Duration) *durationpb.Duration {
	d.Seconds, d.Nanos = int64(x/time.Second), int32(x%time.Second)
	return d
}

// refused is the answer to a request beyond a bound of the server (rule,
// limit), which Envoy would let through on an error: every descriptor
// OVER_LIMIT, none decided, and the problem document of a request that will
// never pass, saying why (detail).
func refused(req *rlsv3.RateLimitRequest, rule string, limit int, detail string) *rlsv3.RateLimitResponse {
	resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OVER_LIMIT,
		Statuses:             make([]*rlsv3.RateLimitResponse_DescriptorStatus, len(req.Descriptors)),
		ResponseHeadersToAdd: []*corev3.HeaderValue{{Key: "Content-Type", Value: "application/problem+json"}}}
	over := &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OVER_LIMIT} // one for all
	for i := range resp.Statuses {
		resp.Statuses[i] = over
	}
	b := &core.BlockedError{Resource: req.Domain, Rule: rule, Limit: int64(limit), Never: true}
	resp.RawBody = problem(b, []*core.BlockedError{b}, detail+": it will never pass (a bound of the server, which shadow mode lifts only when no limit that may apply is enforced)")
	return resp
}

// allOK is the answer to a request of an unknown domain with
// WithUnknownDomainOK: every descriptor OK, as the reference server answers.
func (s *Server) allOK(req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
	resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	for range req.Descriptors {
		resp.Statuses = append(resp.Statuses, &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK})
	}
	return resp
}

func validDescriptor(i int, d *ratelimitv3.RateLimitDescriptor, rules bool) error {
	if len(d.GetEntries()) == 0 {
		return status.Errorf(codes.InvalidArgument, "descriptor %d: no entries", i)
	}
	if d.IsNegativeHits {
		return status.Errorf(codes.InvalidArgument, "descriptor %d: is_negative_hits is not supported", i)
	}
	for j, e := range d.Entries {
		if e.GetKey() == "" {
			return status.Errorf(codes.InvalidArgument, "descriptor %d: entry %d: empty key", i, j)
		}
		if rules && strings.ContainsAny(e.Key, "/*") {
			return status.Errorf(codes.InvalidArgument, "descriptor %d: entry %d: key %s: a key of a domain of sluice rules has no '/' or '*'", i, j, core.Quote(e.Key))
		}
	}
	return nil
}

// overrideOf returns the override a descriptor's limit field asks for, and
// its current_limit.
func overrideOf(i int, l *ratelimitv3.RateLimitDescriptor_RateLimitOverride) (override, *rlsv3.RateLimitResponse_RateLimit, error) {
	unit := rlsv3.RateLimitResponse_RateLimit_Unit(l.Unit)
	u := unitOf(unit)
	if u == "" {
		return override{}, nil, status.Errorf(codes.InvalidArgument, "descriptor %d: limit: unit %v is not one of SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, YEAR", i, l.Unit)
	}
	w := u.Duration()
	lim := &rlsv3.RateLimitResponse_RateLimit{RequestsPerUnit: l.RequestsPerUnit, Unit: unit}
	if m := l.GetUnitMultiplier(); m != nil {
		if m.Value == 0 || m.Value > 1000 {
			return override{}, nil, status.Errorf(codes.InvalidArgument, "descriptor %d: limit: unit_multiplier must be from 1 to 1000, got %d", i, m.Value)
		}
		if w > math.MaxInt64/time.Duration(m.Value) {
			return override{}, nil, status.Errorf(codes.InvalidArgument, "descriptor %d: limit: %d times %v is longer than any window", i, m.Value, unit)
		}
		w *= time.Duration(m.Value)
		lim.UnitMultiplier = m
	}
	return override{rpu: l.RequestsPerUnit, window: w}, lim, nil
}

// enum returns u as the protocol spells it; UNKNOWN for an unknown unit.
func (u Unit) enum() rlsv3.RateLimitResponse_RateLimit_Unit {
	for e := rlsv3.RateLimitResponse_RateLimit_SECOND; e <= rlsv3.RateLimitResponse_RateLimit_YEAR; e++ {
		if unitOf(e) == u {
			return e
		}
	}
	return rlsv3.RateLimitResponse_RateLimit_UNKNOWN
}

// unitOf returns the Unit of e, "" for UNKNOWN or a value outside the enum.
func unitOf(e rlsv3.RateLimitResponse_RateLimit_Unit) Unit {
	switch e {
	case rlsv3.RateLimitResponse_RateLimit_SECOND:
		return UnitSecond
	case rlsv3.RateLimitResponse_RateLimit_MINUTE:
		return UnitMinute
	case rlsv3.RateLimitResponse_RateLimit_HOUR:
		return UnitHour
	case rlsv3.RateLimitResponse_RateLimit_DAY:
		return UnitDay
	case rlsv3.RateLimitResponse_RateLimit_WEEK:
		return UnitWeek
	case rlsv3.RateLimitResponse_RateLimit_MONTH:
		return UnitMonth
	case rlsv3.RateLimitResponse_RateLimit_YEAR:
		return UnitYear
	}
	return ""
}

// limitOf sets l to the current_limit of a quota of a sluice rule and
// returns it: its limit per the unit that its window is, else per its
// window's seconds (unit SECOND with a unit_multiplier); nil for a window
// of no whole seconds.
func limitOf(l *rlsv3.RateLimitResponse_RateLimit, q core.Quota) *rlsv3.RateLimitResponse_RateLimit {
	l.Name, l.RequestsPerUnit = q.Rule, clampU32(q.Limit)
	for e := rlsv3.RateLimitResponse_RateLimit_SECOND; e <= rlsv3.RateLimitResponse_RateLimit_WEEK; e++ {
		if unitOf(e).Duration() == q.Window {
			l.Unit = e
			return l
		}
	}
	if q.Window <= 0 || q.Window%time.Second != 0 || q.Window/time.Second > math.MaxUint32 {
		return nil
	}
	l.Unit = rlsv3.RateLimitResponse_RateLimit_SECOND
	l.UnitMultiplier = wrapperspb.UInt32(uint32(q.Window / time.Second))
	return l
}

// closest returns the quota of qs with the least remaining.
func closest(qs []core.Quota) core.Quota {
	q := qs[0]
	for _, o := range qs[1:] {
		if o.Remaining < q.Remaining {
			q = o
		}
	}
	return q
}

func clampU32(n int64) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

// maxRulesResource is the length of the longest resource a rule names (a
// longer one only a glob rule matches).
const maxRulesResource = 1024

// rulesResource is the resource of a descriptor of a domain of sluice
// rules: the domain and the entries' keys, joined by '/'.
func rulesResource(domain string, es []*ratelimitv3.RateLimitDescriptor_Entry) string {
	n := len(domain)
	for _, e := range es {
		n += 1 + len(e.Key)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(domain)
	for _, e := range es {
		b.WriteByte('/')
		b.WriteString(e.Key)
	}
	return b.String()
}

// entryParams are the params of a descriptor of a domain of sluice rules:
// each entry's value, by its key.
type entryParams []*ratelimitv3.RateLimitDescriptor_Entry

func (p *entryParams) Param(name string, i int) (string, bool) {
	for _, e := range *p {
		if e.Key == name {
			if i == 0 {
				return e.Value, true
			}
			i--
		}
	}
	return "", false
}

// descriptorValue is the Params of a descriptor limited by its entries: v
// is the value of descriptorParam (see appendValue).
type descriptorValue struct{ v string }

func (v *descriptorValue) Param(name string, i int) (string, bool) {
	if name != descriptorParam || i != 0 {
		return "", false
	}
	return v.v, true
}

// appendValue appends the value of descriptorParam of a descriptor limited
// by the entries' values (see appendEntries), after prefix and ':' when
// prefix is not empty.
func appendValue(dst []byte, prefix string, es []*ratelimitv3.RateLimitDescriptor_Entry, shares []string) []byte {
	if prefix != "" {
		dst = appendEscaped(dst, prefix)
		dst = append(dst, ':')
	}
	return appendEntries(dst, es, shares)
}
