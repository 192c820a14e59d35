package dashboard

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sluicekit/sluice/core"
)

//go:embed assets
var assets embed.FS

// Defaults and bounds of the options.
const (
	defaultTitle   = "sluice"
	defaultHistory = 600
	maxHistory     = 3600
)

// config is what the options set, and what the page's template reads.
type config struct {
	Title   string
	History int // seconds of the charts
}

// Option configures the handler New makes.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// WithTitle sets the page's title (default "sluice"): at most 200
// bytes, no control characters.
func WithTitle(title string) Option {
	return optionFunc(func(c *config) error {
		if title == "" || len(title) > 200 || strings.ContainsFunc(title, unicode.IsControl) {
			return fmt.Errorf("WithTitle(%s): must be 1 to 200 bytes without control characters", core.Quote(title))
		}
		c.Title = title
		return nil
	})
}

// WithHistory sets how many seconds the page's charts show (default
// 600, at most 3600). The page opens with the history the
// Guard keeps (the last 10 minutes at most, see core.Guard.History) and
// adds a point a second from its polls.
func WithHistory(seconds int) Option {
	return optionFunc(func(c *config) error {
		if seconds < 2 || seconds > maxHistory {
			return fmt.Errorf("WithHistory(%d): must be between 2 and %d", seconds, maxHistory)
		}
		c.History = seconds
		return nil
	})
}

// handler serves the page, its script and style, and the snapshot.
type handler struct {
	g       *core.Guard
	history time.Duration // WithHistory
	page    []byte
	js      []byte
	css     []byte
}

// New returns an http.Handler that serves the dashboard of g at the paths
// and with the headers the package doc lists, and makes the Guard record
// its history (core.Guard.History) from now on. The page refers to its
// script, style and snapshot relatively, so the handler may be mounted
// under any prefix, with or without http.StripPrefix:
//
//	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", h))
//	mux.Handle("/debug/sluice/", h)
func New(g *core.Guard, opts ...Option) (http.Handler, error) {
	if g == nil {
		return nil, errors.New("dashboard: New: guard is nil")
	}
	cfg := config{Title: defaultTitle, History: defaultHistory}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("dashboard: New: nil option")
		}
		if err := o.apply(&cfg); err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
	}
	tmpl, err := template.ParseFS(assets, "assets/index.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	var page bytes.Buffer
	if err := tmpl.Execute(&page, cfg); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	js, _ := assets.ReadFile("assets/dashboard.js")
	css, _ := assets.ReadFile("assets/dashboard.css")
	g.History(g.Clock().Now()) // the Guard records from now on
	return &handler{g: g, history: time.Duration(cfg.History) * time.Second, page: page.Bytes(), js: js, css: css}, nil
}

// pageCSP lets the page load its own script and style and fetch its
// snapshot, and nothing else; the other responses may do nothing at all.
const (
	pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
	noneCSP = "default-src 'none'; frame-ancestors 'none'"
)

// ServeHTTP serves the page, its script and style, and the snapshot (see
// New).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", noneCSP)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "":
		// The prefix itself, stripped: the page's relative references need
		// its URL to end in "/". The Location is relative to the prefix, so
		// that no path can make it point at another host.
		orig := r.URL.EscapedPath() // the path asked for, before any http.StripPrefix
		if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.Path != "" {
			orig = u.EscapedPath()
		}
		if orig == "" || strings.HasSuffix(orig, "/") {
			http.NotFound(w, r)
			return
		}
		hd.Set("Location", "./"+orig[strings.LastIndexByte(orig, '/')+1:]+"/")
		w.WriteHeader(http.StatusMovedPermanently)
	case strings.HasSuffix(p, "/"):
		hd.Set("Content-Security-Policy", pageCSP)
		hd.Set("Referrer-Policy", "no-referrer")
		write(w, "text/html; charset=utf-8", h.page)
	case p == "api/snapshot" || strings.HasSuffix(p, "/api/snapshot"):
		after := h.g.Clock().Now() - h.history
		if q := r.URL.Query(); q.Has("after") {
			ms, err := strconv.ParseInt(q.Get("after"), 10, 64)
			if err != nil {
				http.Error(w, "after: must be an integer, milliseconds on the Guard's clock (historyAt)", http.StatusBadRequest)
				return
			}
			const most = math.MaxInt64 / int64(time.Millisecond)
			after = time.Duration(max(min(ms, most), -most)) * time.Millisecond
		}
		hist := h.g.History(after)
		body, err := json.Marshal(view(h.g.Snapshot(), hist, time.Now()))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		write(w, "application/json", body)
	case p == "dashboard.js" || strings.HasSuffix(p, "/dashboard.js"):
		write(w, "text/javascript; charset=utf-8", h.js)
	case p == "dashboard.css" || strings.HasSuffix(p, "/dashboard.css"):
		write(w, "text/css; charset=utf-8", h.css)
	default:
		http.NotFound(w, r)
	}
}

func write(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(body)
}
