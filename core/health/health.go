package health

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// report is the body Handler serves, described field by field in the package doc.
type report struct {
	Ready    bool     `json:"ready"`
	Problems []string `json:"problems,omitempty"`
	Stores   []store  `json:"stores"`
	Rules    rules    `json:"rules"`
}

type store struct {
	Name      string `json:"name"`
	Healthy   bool   `json:"healthy"`
	Errors    int64  `json:"errors"`
	Fallbacks int64  `json:"fallbacks"`
}

type rules struct {
	Count int    `json:"count"`
	File  string `json:"file,omitempty"`
	Error string `json:"error,omitempty"`
}

type config struct {
	watcher       *rulesfile.Watcher
	requireStores bool
	requireRules  bool
}

// Option configures Handler.
type Option func(*config) error

// WithWatcher adds the state of w's rules file to the report.
func WithWatcher(w *rulesfile.Watcher) Option {
	return func(c *config) error {
		if w == nil {
			return errors.New("health: WithWatcher: watcher is nil")
		}
		c.watcher = w
		return nil
	}
}

// RequireStores makes the instance not ready while a store is down (its
// breaker open): for services whose limits must be shared to be right.
func RequireStores() Option {
	return func(c *config) error { c.requireStores = true; return nil }
}

// RequireRules makes the instance not ready while its rules file's last
// version was refused (WithWatcher required): the instance then runs on
// older rules than the file says.
func RequireRules() Option {
	return func(c *config) error { c.requireRules = true; return nil }
}

// Handler returns the readiness handler of g: it answers GET and HEAD
// with a Report as JSON, status 200 when ready and 503 when not; other
// methods get 405.
func Handler(g *core.Guard, opts ...Option) (http.Handler, error) {
	if g == nil {
		return nil, errors.New("health: Handler: guard is nil")
	}
	var c config
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("health: Handler: nil option")
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if c.requireRules && c.watcher == nil {
		return nil, errors.New("health: Handler: RequireRules needs WithWatcher")
	}
	return &handler{g: g, cfg: c}, nil
}

type handler struct {
	g   *core.Guard
	cfg config
}

// check returns the report of the Guard's readiness now.
func (h *handler) check() report {
	r := report{Stores: []store{}}
	for _, s := range h.g.Stores() {
		r.Stores = append(r.Stores, store{Name: s.Name, Healthy: s.Healthy, Errors: s.Errors, Fallbacks: s.Fallbacks})
		if !s.Healthy && h.cfg.requireStores {
			r.Problems = append(r.Problems, "store "+s.Name+" is down")
		}
	}
	r.Rules.Count = len(h.g.Rules())
	if w := h.cfg.watcher; w != nil {
		st := w.Stats()
		r.Rules.File = st.Path
		if err := st.Err; err != nil {
			r.Rules.Error = err.Error()
			if h.cfg.requireRules {
				r.Problems = append(r.Problems, "rules file "+r.Rules.File+" was refused; older rules are in force")
			}
		}
	}
	r.Ready = r.Problems == nil
	return r
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rep := h.check()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rep.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(rep)
	}
}
