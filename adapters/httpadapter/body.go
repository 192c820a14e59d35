package httpadapter

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// Body is a request's body as the handler reads it, recording whether a
// read of it failed: the client sent it malformed (a bad chunked
// encoding), cut it short or too slowly. A failure of the request after
// that is the client's, not the server's: a reverse proxy answers 502 for
// a body it cannot forward, though its backend is healthy (ExitError).
// A handler may keep r.Body: a Body is not reused.
type Body struct {
	io.ReadCloser
	failed, ended atomic.Bool
}

// WrapBody puts r's body, when it has one, through a new Body, which it
// returns (nil when r has no body).
func WrapBody(r *http.Request) *Body {
	if !hasBody(r) {
		return nil
	}
	b := new(Body)
	b.Wrap(r)
	return b
}

// Wrap puts r's body, when it has one, through b, a Body of no request.
func (b *Body) Wrap(r *http.Request) {
	if hasBody(r) {
		b.ReadCloser, r.Body = r.Body, b
	}
}

func hasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }

// Unwrap gives r back the body Wrap put through b, unless the handler
// replaced it. Call it when the handler returned: net/http then deals with
// what is left of the body by its type, and closes the connection when
// the body was closed after a failed read, lest the bytes after a
// malformed chunk be read as another request. b may be nil (no body).
func (b *Body) Unwrap(r *http.Request) {
	if b != nil && b.ReadCloser != nil && r.Body == io.ReadCloser(b) {
		r.Body = b.ReadCloser
	}
}

// Read reads the body, recording its end (io.EOF) or a failure (another
// error).
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.ended.Store(true)
	case err != nil:
		b.failed.Store(true)
	}
	return n, err
}

// Unread reports whether the request has a body (Wrap put it through b)
// that was not read to its end.
func (b *Body) Unread() bool { return b.ReadCloser != nil && !b.ended.Load() }

// ExitError returns err, the error to give Entry.Exit for the request
// whose body b is, also wrapping context.Canceled when err is not nil and
// a read of b failed: the failure is the client's, and the request
// "gone" (core.Entry.Exit), so that a client's bad uploads cannot open a
// breaker. b may be nil (no body).
func (b *Body) ExitError(err error) error {
	if err == nil || b == nil || !b.failed.Load() || errors.Is(err, context.Canceled) {
		return err
	}
	return errors.Join(err, context.Canceled)
}
