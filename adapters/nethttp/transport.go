package sluicehttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// transport is the http.RoundTripper of NewTransport.
type transport struct {
	config
	base   http.RoundTripper
	params sync.Pool // of *extractors.Params, used during Enter only
}

// NewTransport returns an http.RoundTripper that puts the requests a
// client makes through guard, so that calls to other services have flow,
// concurrency, hotspot and breaker rules too, and sends admitted requests
// through base (http.DefaultTransport when nil):
//
//	t, err := sluicehttp.NewTransport(guard, nil)
//	client := &http.Client{Transport: t}
//
// The resource of a request is "METHOD HOST", its method and URL host name
// as the host param reads it, without port or trailing dot, in lower case
// ("GET api.example.com" for https://API.example.com.:443/; rules may name
// "* api.example.com" for every method), or what WithResource returns; a
// throttle tells the ports apart (WithThrottle). An internationalized host
// name is its resource as the URL writes it: "bücher.example" and
// "xn--bcher-kva.example", the ASCII form net/http sends for both, are two
// resources (see extractors.NormalizeHost); a rule on such a host names
// both forms, or WithResource converts them. A call to a host longer than
// DNS allows (253 bytes) fails at once, without a resource: hosts from
// users' URLs (webhooks) cost about 4.6 KB each, up to WithMaxResources
// hosts (TestOutgoingCallsToHostsOfAnyLengthOverLoopback,
// `go test -run HostsOfAnyLength -v ./adapters/nethttp`).
// WithExtractor, WithSkipper, WithResource, WithCost, WithErrorClassifier
// and WithThrottle apply; WithBlockHandler and WithRateLimitFields are for
// servers, and NewTransport returns an error naming them, as it does a rule
// naming a param the Extractor cannot supply (see core.ParamSource). Params
// are read from the outgoing request (headers, query, host, method, custom
// HTTP params); ip and path are absent. It panics when guard is nil.
//
// A blocked call never reaches the network: RoundTrip returns the
// *core.BlockedError (which the client wraps in a *url.Error; errors.As
// finds it). An admitted call ends when its response body is read to the
// end or closed, as http.Client asks of every caller: a concurrency slot is
// held, and the response time runs, until then (for a 101 Switching
// Protocols, whose body stays the io.ReadWriteCloser net/http gives, until
// it is closed). A transport error, a deadline of the call passing before
// the answer (the upstream's slowness), a panic of base (which goes on), or
// a response the error classifier counts as one (by default a status of
// 500 and above), is a failure for breakers; a call its caller cancelled is
// not (core.Entry.Exit), nor one that failed because reading its request
// body did (the caller's file or pipe, or the body GetBody rebuilt for
// net/http to send again) or it was not of its ContentLength, nor one
// net/http refused to send (a header value with a line break, a URL of
// another scheme than http and https), which a throttle does not count
// either. A file body is still sent with sendfile where net/http sends one
// so (no TLS, a known ContentLength).
func NewTransport(guard *core.Guard, base http.RoundTripper, opts ...Option) (http.RoundTripper, error) {
	c, err := newConfig("NewTransport", guard, opts)
	if err != nil {
		return nil, err
	}
	if c.serverOnly != "" {
		return nil, fmt.Errorf("sluicehttp: NewTransport: %s does not apply to a client's requests", c.serverOnly)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{config: c, base: base}, nil
}

// maxHostLen is the longest host name DNS resolves (RFC 1035, without the
// trailing dot): a call to a longer host is refused before it costs a
// resource name.
const maxHostLen = 253

// RoundTrip admits r under the Guard's rules and sends it through the base
// RoundTripper, or returns the rejection without sending it (closing r's
// body, as a RoundTripper must).
func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.skip != nil && t.skip(r) {
		return t.base.RoundTrip(r)
	}
	var resource, upstream string
	if t.resource != nil {
		resource = t.resource(r)
		upstream = resource
	} else {
		host := extractors.NormalizeHost(r.URL.Host)
		if len(host) > maxHostLen {
			closeBody(r)
			return nil, fmt.Errorf("sluicehttp: Transport: a host of %d bytes, longer than a DNS name (%d bytes at most): not sent", len(host), maxHostLen)
		}
		resource = t.Extractor.HTTPResource(r.Method, host)
		upstream = withPort(resource, r.URL)
	}
	if t.throttle != nil {
		if err := t.throttle.Allow(upstream); err != nil {
			closeBody(r)
			return nil, err
		}
	}
	p, _ := t.params.Get().(*extractors.Params)
	if p == nil {
		p = new(extractors.Params)
	}
	n := int64(1)
	if t.cost != nil {
		n = t.cost(r)
	}
	e, err := t.Enter(p, r, resource, n, nil, nil)
	t.params.Put(p)
	if err != nil {
		closeBody(r)
		return nil, err
	}
	finished := false
	defer func() {
		if !finished { // base panicked: free the slot, and let the panic go on
			e.Exit(httpadapter.PanicExitError(r.Context()))
		}
	}()
	var sent *upload
	if r.Body != nil && r.Body != http.NoBody {
		sent = &upload{want: r.ContentLength, get: r.GetBody}
		r = r.WithContext(r.Context()) // a copy: a RoundTripper leaves r as it is
		r.Body = sent.wrap(r.Body)
		if r.GetBody != nil {
			r.GetBody = sent.getBody
		}
	}
	res, err := t.base.RoundTrip(r)
	finished = true
	if err != nil && (sent != nil && sent.last.Load().failed.Load() || unsendable(r)) {
		// The caller's body failed, or net/http refused the caller's
		// request: not the upstream. The caller gave up.
		e.Exit(errors.Join(err, context.Canceled))
		return nil, err
	}
	if t.throttle != nil {
		t.record(r.Context(), upstream, res, err)
	}
	if err != nil {
		e.Exit(upstreamErr(t.ExitError(0, err)))
		return nil, err
	}
	body := &exitBody{ReadCloser: res.Body, e: e, err: t.ExitError(res.StatusCode, nil)}
	if res.Body == nil {
		body.ReadCloser = http.NoBody
	}
	res.Body = body
	if w, ok := body.ReadCloser.(io.Writer); ok && res.StatusCode == http.StatusSwitchingProtocols {
		res.Body = exitRWBody{body, w} // writable, as net/http gives it
	}
	return res, nil
}

// unsendable reports whether net/http refuses to send r, before any
// connection: a URL of another scheme than http and https (a webhook URL a
// user gave, say), or a method or header field name that is no token (RFC
// 9110, 5.6.2), or a header value with a control character but tab (a line
// break in a value a user gave).
func unsendable(r *http.Request) bool {
	if r.URL.Scheme != "http" && r.URL.Scheme != "https" || r.Method != "" && !isToken(r.Method) {
		return true
	}
	for k, vv := range r.Header {
		if !isToken(k) {
			return true
		}
		for _, v := range vv {
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
					return true
				}
			}
		}
	}
	return false
}

// isToken reports whether s is a token: one or more of the characters
// "!#$%&'*+-.^_`|~", digits and letters.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// withPort returns resource with u's port after a colon when it is not
// the default of u's scheme: the name a throttle keeps an upstream's
// calls under, so that services on two ports of one host are throttled
// apart.
func withPort(resource string, u *url.URL) string {
	switch p := u.Port(); {
	case p == "", p == "80" && (u.Scheme == "http" || u.Scheme == "ws"), p == "443" && (u.Scheme == "https" || u.Scheme == "wss"):
		return resource
	default:
		return resource + ":" + p
	}
}

// errDeadline is the outcome of a call whose deadline passed before the
// upstream answered: its slowness, a failure for breakers, where the
// context's error would tell Exit that the caller gave up.
var errDeadline = errors.New("sluice: the upstream did not answer before the call's deadline")

// upstreamErr returns err, or errDeadline for an error of a deadline.
func upstreamErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errDeadline
	}
	return err
}

// closeBody closes r's body, as a RoundTripper that does not send r must.
func closeBody(r *http.Request) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
}

// record tells the throttle how a call ended: rejected when the upstream
// answered 429 or 503 or not at all, paused for its Retry-After; a call
// its caller cancelled (ctx) is not counted, as the upstream owed it no
// answer.
func (t *transport) record(ctx context.Context, resource string, res *http.Response, err error) {
	if err != nil {
		if ctx.Err() != context.Canceled {
			t.throttle.Record(resource, false, 0)
		}
		return
	}
	rejected := res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable
	var pause time.Duration
	if rejected {
		pause = retryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	t.throttle.Record(resource, !rejected, pause)
}

// retryAfter returns the wait a Retry-After field value asks for, delay
// seconds or an HTTP date after now; 0 when it asks for none or does not
// parse.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(math.MaxInt64/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0)
	}
	return 0
}

// upload is the body of a request sent through the base RoundTripper:
// the body last given to it, the first or one rebuilt for a retry
// (GetBody), records whether reading it failed (sentBody).
type upload struct {
	want int64                         // the request's ContentLength
	get  func() (io.ReadCloser, error) // the request's GetBody
	last atomic.Pointer[sentBody]
}

// wrap returns body as a sentBody, the last one; a file stays one that
// net/http's Transport sends with sendfile (sentFile).
func (u *upload) wrap(body io.ReadCloser) io.ReadCloser {
	b := &sentBody{ReadCloser: body, want: u.want}
	u.last.Store(b)
	if f, ok := body.(sendfileBody); ok {
		return &sentFile{b, f}
	}
	return b
}

// getBody is the request's GetBody, which net/http's Transport calls to
// send the body again, its body wrapped; failing, it is the caller's failure.
func (u *upload) getBody() (io.ReadCloser, error) {
	body, err := u.get()
	if err != nil {
		b := &sentBody{}
		b.failed.Store(true)
		u.last.Store(b)
		return nil, err
	}
	if body == nil || body == http.NoBody {
		return body, nil
	}
	return u.wrap(body), nil
}

// sentBody is a request body that records whether reading it failed, or
// ended after other than want bytes (a Content-Length the body does not
// have, which net/http refuses) when want > 0.
type sentBody struct {
	io.ReadCloser
	want, read int64
	failed     atomic.Bool
}

// sendfileBody is a body that net's sendfile reads by its file descriptor
// (syscall.Conn; an *os.File), whose offset says how far it read.
type sendfileBody interface {
	syscall.Conn
	io.Seeker
}

// sentFile is the sentBody of a file, which net/http's Transport sends
// with sendfile when the connection has no TLS and the Content-Length is
// known: the kernel reads the file, sentBody.Read does not, and the
// file's offset counts what it read. A file's read error within sendfile
// (the disk's) is the upstream's failure, not the caller's.
type sentFile struct {
	*sentBody
	f sendfileBody
}

// SyscallConn returns the file's syscall.RawConn, counting what sendfile reads.
func (s *sentFile) SyscallConn() (syscall.RawConn, error) {
	rc, err := s.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return sentRawConn{rc, s}, nil
}

// sentRawConn is a file's syscall.RawConn whose Read counts the bytes of
// the file read in it (by sendfile) in the sentBody's.
type sentRawConn struct {
	syscall.RawConn
	s *sentFile
}

func (c sentRawConn) Read(f func(fd uintptr) bool) error {
	start, serr := c.s.f.Seek(0, io.SeekCurrent)
	err := c.RawConn.Read(f)
	if end, eerr := c.s.f.Seek(0, io.SeekCurrent); serr == nil && eerr == nil {
		c.s.read += end - start
	}
	return err
}

func (b *sentBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if err != nil && (err != io.EOF || b.want > 0 && b.read != b.want) {
		b.failed.Store(true)
	}
	return n, err
}

// exitBody is a response body that exits its request's entry when it is
// read to the end or closed, whichever comes first.
type exitBody struct {
	io.ReadCloser
	e    core.Entry
	err  error // the outcome to exit with
	done atomic.Bool
}

func (b *exitBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.exit(upstreamErr(err)) // the body failed: the call did
	} else if err != nil {
		b.exit(b.err)
	}
	return n, err
}

func (b *exitBody) Close() error {
	err := b.ReadCloser.Close()
	b.exit(b.err)
	return err
}

// exitRWBody is the exitBody of a 101 Switching Protocols response, whose
// body net/http makes an io.ReadWriteCloser.
type exitRWBody struct {
	*exitBody
	w io.Writer
}

func (b exitRWBody) Write(p []byte) (int, error) { return b.w.Write(p) }

func (b *exitBody) exit(err error) {
	if b.done.CompareAndSwap(false, true) {
		b.e.Exit(err)
	}
}
