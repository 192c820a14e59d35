package httpadapter

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// The errors an adapter gives Entry.Exit when the handler reported none.
var (
	// errStatus is given to Exit when the error classifier counts a
	// response as an error by its status alone.
	errStatus = errors.New("sluice: the response status counts as an error")
	// errPanic is given to Exit when the handler panicked (or called
	// runtime.Goexit) instead of returning.
	errPanic = errors.New("sluice: the handler panicked")
)

// minFailureStatus is the lowest response status the default error
// classifier counts as a failure.
const minFailureStatus = http.StatusInternalServerError

// defaultClassifier is the default error classifier: a request failed when
// its response status is 500 or more, or when the handler reported an
// error.
func defaultClassifier(status int, err error) bool {
	return err != nil || status >= minFailureStatus
}

// Common is the part of an adapter's configuration every HTTP adapter has.
type Common struct {
	Guard     *core.Guard
	Extractor *extractors.Extractor
	// Classify reports whether a request's outcome counts as an error.
	Classify func(status int, err error) bool
	// NoQuota keeps the RateLimit fields off admitted responses.
	NoQuota bool
	// Routes lists the routes the adapter serves, when it is told how
	// (sluicegin.WithRoutes); see CheckRoutes.
	Routes func() []Route
	routed *atomic.Bool // see CheckRoutes; shared by copies of the Common
	quotas *quotaTexts  // see SetQuotaHeaders; shared by copies of the Common
}

// Init starts a configuration for guard; pkg names the adapter in the
// panic when guard is nil.
func (c *Common) Init(pkg string, guard *core.Guard) {
	if guard == nil {
		panic(pkg + ": nil *core.Guard (make one with core.New)")
	}
	c.Guard = guard
	c.routed = new(atomic.Bool)
	c.quotas = new(quotaTexts)
}

// FinishErr fills in the defaults of the fields no option set (the
// Extractor is the Guard's, see extractors.ForAdapter), and adds the
// Extractor's HTTP params to the Guard's param sources: it returns an
// error naming them when rules in force name params the Extractor cannot
// supply.
func (c *Common) FinishErr() error {
	x, err := extractors.ForAdapter(c.Guard, c.Extractor)
	if err != nil {
		return err
	}
	c.Extractor = x
	if c.Classify == nil {
		c.Classify = defaultClassifier
	}
	return c.Guard.AddParamSource(c.Extractor.HTTPSource())
}

// Enter asks the Guard to admit r as resource, n permits of it (at least
// one: a cost below 1 is 1), reading r's params through p, which it Resets
// for r (path parameters from path, or r.PathValue when path is nil) and,
// when Enter returns, Resets to hold nothing: the Guard reads params only
// during Enter, so p may then serve another request (the adapters keep
// their params in a sync.Pool for that). Unless NoQuota is set or quotas
// is nil, the policies of the rate rules that admit the request are
// appended to *quotas (emptied first; core.WithQuotas), for
// SetQuotaHeaders.
func (c *Common) Enter(p *extractors.Params, r *http.Request, resource string, n int64, path extractors.PathParams, quotas *[]core.Quota) (core.Entry, error) {
	var opts [3]core.EnterOption
	opts[0] = core.WithParams(p)
	k := 1
	if n > 1 {
		opts[k] = core.WithCount(n)
		k++
	}
	if !c.NoQuota && quotas != nil {
		*quotas = (*quotas)[:0]
		opts[k] = core.WithQuotas(quotas)
		k++
	}
	p.ResetHTTP(c.Extractor, r, path)
	e, err := c.Guard.Enter(r.Context(), resource, opts[:k]...)
	p.ResetHTTP(nil, nil, nil)
	return e, err
}

// ExitError returns the error to give Entry.Exit for a request that ended
// with status and the handler's error err: nil when Classify does not count
// the outcome as an error, else err, or errStatus when err is nil.
func (c *Common) ExitError(status int, err error) error {
	if !c.Classify(status, err) {
		return nil
	}
	if err != nil {
		return err
	}
	return errStatus
}

// PanicExitError is the error to give Entry.Exit for a request, whose
// context is ctx, whose handler panicked (or called runtime.Goexit):
// errPanic, also wrapping ctx.Err() once ctx has ended, as the request is
// then gone (see HandlerExitError): a handler aborts when it cannot write
// to a client that hung up (httputil.ReverseProxy panics with
// http.ErrAbortHandler).
func PanicExitError(ctx context.Context) error { return gone(ctx, errPanic) }

// gone returns err, also wrapping ctx.Err() once ctx has ended, unless err
// is nil or wraps it already.
func gone(ctx context.Context, err error) error {
	if cerr := ctx.Err(); err != nil && cerr != nil && !errors.Is(err, cerr) {
		return errors.Join(err, cerr)
	}
	return err
}

// HandlerExitError is ExitError for a request a handler served, whose
// context is ctx: when the handler reported no error and wrote nothing (no
// header, no body: written false) and ctx has ended, the client gave up
// before an answer, and the outcome is ctx.Err() (context.Canceled or
// DeadlineExceeded) with status 200, what net/http sends then. Classify sees
// that error and, by default, counts the request as a failure, as the gRPC
// adapter does; given to Exit, it makes the request "gone" (core.Entry.Exit),
// no completion for system rules. A response written, or an error reported,
// after the client left is counted by its status and error; when that
// counts as a failure, the hang-up may have caused it (a reverse proxy
// answers 502, a downstream gRPC call fails with Canceled), and the outcome
// also wraps ctx.Err(): gone, so that hang-ups cannot open an error breaker.
func (c *Common) HandlerExitError(ctx context.Context, written bool, status int, err error) error {
	if err == nil && !written {
		err = ctx.Err()
	}
	return gone(ctx, c.ExitError(status, err))
}
