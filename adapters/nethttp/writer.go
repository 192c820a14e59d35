package sluicehttp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"

	"github.com/sluicekit/sluice/adapters/httpadapter"
)

// responseWriter is the http.ResponseWriter the middleware hands the
// handler: it records the response status for the error classifier and
// passes everything on. It implements http.Flusher, http.Hijacker,
// io.ReaderFrom (so that sendfile still works) and io.StringWriter (so
// that io.WriteString copies nothing), delegating to the
// underlying writer through http.ResponseController, and Unwrap, so that
// http.ResponseController reaches the underlying writer's other features
// (deadlines, full duplex).
type responseWriter struct {
	http.ResponseWriter
	status int               // 0 until the header is written
	body   *httpadapter.Body // the request's body, as the handler reads it
}

// result returns the status the response ended with: the one written, or
// 200 when the handler wrote nothing (net/http then sends 200).
func (w *responseWriter) result() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// WriteHeader records the first final status and passes code on. A 413
// before the body was read to its end is most likely the answer to
// http.MaxBytesReader's error, which cannot reach net/http's writer through
// this one: net/http is told (tooLarge).
func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
		if code == http.StatusRequestEntityTooLarge && w.body.Unread() {
			tooLarge(w.ResponseWriter)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// tooLarge tells w, net/http's writer, that the request's body is larger
// than the handler allows, as http.MaxBytesReader tells the writer it was
// given when its limit is hit: the server closes the connection after the
// response (and says so in it, when its header is not written yet) and
// reads no more of the body. It does nothing when w is another writer.
func tooLarge(w http.ResponseWriter) {
	_, _ = http.MaxBytesReader(w, io.NopCloser(strings.NewReader("!")), 0).Read(make([]byte, 1))
}

// overLimit reports whether body, the request's body as the handler left
// it, is an http.MaxBytesReader whose limit was hit. A MaxBytesReader
// returns its error without reading when asked for no bytes.
func overLimit(body io.Reader) bool {
	if body == nil || reflect.TypeOf(body) != reflect.TypeOf(http.MaxBytesReader(nil, nil, 0)) {
		return false
	}
	_, err := body.Read(nil)
	var tooBig *http.MaxBytesError
	return errors.As(err, &tooBig)
}

// Write records status 200 if none was written and passes b on.
func (w *responseWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// WriteString records status 200 if none was written and passes s on,
// through the underlying writer's WriteString when it has one (net/http's
// has), without copying s to a byte slice.
func (w *responseWriter) WriteString(s string) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.WriteString(w.ResponseWriter, s)
}

// ReadFrom copies src to the response, through the underlying writer's
// ReadFrom when it has one (sendfile).
func (w *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{w.ResponseWriter}, src)
}

// writerOnly hides every method but Write, so that io.Copy does not call
// ReadFrom back.
type writerOnly struct{ io.Writer }

// Flush sends buffered data to the client (http.Flusher); it does nothing
// when the underlying writer cannot flush.
func (w *responseWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
		return
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack takes over the connection (http.Hijacker), when the underlying
// writer allows it; a hijacked request counts as status 101.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
