package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core"
)

// width is the width of the output: it fits an 80-column terminal.
const width = 79

// maxNameWidth caps the name column; longer names are cut.
const maxNameWidth = 24

// report writes the demo's output. It is used by one goroutine.
type report struct {
	w     io.Writer
	err   error // the first write error
	st    *stats
	nameW int
}

func newReport(w io.Writer, st *stats) *report {
	r := &report{w: w, st: st, nameW: len("name")}
	for _, rs := range st.rules {
		r.nameW = max(r.nameW, utf8.RuneCountInString(clean(rs.rule.Name)))
	}
	for _, p := range st.patterns {
		r.nameW = max(r.nameW, len(p.def.name))
	}
	r.nameW = min(r.nameW, maxNameWidth)
	return r
}

func (r *report) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

// item writes name, padded to the name column, and text wrapped to the
// output's width under its first line.
func (r *report) item(name, text string) {
	r.wrap("  "+pad(name, r.nameW)+"  ", text)
}

// wrap writes prefix and text, wrapped to the output's width at spaces (and
// inside words too long for a line), each further line indented as far as
// the prefix.
func (r *report) wrap(prefix, text string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	room := max(width-len(indent), 8)
	line, n, fresh := prefix, len(indent), true
	flush := func() {
		r.printf("%s\n", line)
		line, n, fresh = indent, len(indent), true
	}
	for _, word := range words(printable(text)) {
		for utf8.RuneCountInString(word) > room { // too long for any line
			if !fresh {
				flush()
			}
			rs := []rune(word)
			line += string(rs[:room])
			word = string(rs[room:])
			flush()
		}
		wl := utf8.RuneCountInString(word)
		if !fresh && n+1+wl > width {
			flush()
		}
		if !fresh {
			line += " "
			n++
		}
		line += word
		n += wl
		fresh = false
	}
	if !fresh || line == prefix {
		r.printf("%s\n", line)
	}
}

// words splits text at spaces, keeping a method and the path after it
// ("GET /hello") together.
func words(text string) []string {
	ws := strings.Fields(text)
	out := ws[:0]
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if i+1 < len(ws) && strings.HasPrefix(ws[i+1], "/") && isMethod(w) {
			w += " " + ws[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

// isMethod reports whether w is an HTTP method name in upper case.
func isMethod(w string) bool {
	switch w {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE":
		return true
	}
	return false
}

// header describes the run: where the server is, the rules and the traffic.
func (r *report) header(url string, d time.Duration, source string) {
	r.printf("sluice demo: serving %s for %s; try it with\n", url, d)
	r.printf("  curl -i %s/hello\n", url)
	r.printf("  curl -i -H '%s: mallory' %s/items/1\n", userHeader, url)
	r.printf("and watch it on %s/debug/sluice/ (metrics: /metrics)\n\n", url)
	r.printf("rules (%s):\n", clean(source))
	for _, rs := range r.st.rules {
		r.item(rs.rule.Name, describe(rs.rule))
	}
	r.printf("\ntraffic, all at once:\n")
	for _, p := range r.st.patterns {
		r.item(p.def.name, p.def.desc)
	}
	r.printf("\n%s\n%s\n%s\n%s\n\n",
		"passed: 2xx answers to requests the rule applied to; blocked: 429/503",
		"answers naming the rule (problem body or RateLimit item); failed: any",
		"other outcome. Seconds are the clients', not aligned with the rules'",
		"windows, so a second may show a little more than a limit. Per second:")
	r.columns()
}

// columns writes the table's column titles.
func (r *report) columns() {
	r.printf("%5s  %-7s  %-*s  %8s  %8s  %7s\n", "sec", "what", r.nameW, "name", "passed", "blocked", "failed")
}

// row writes one row of the table; failed < 0 leaves its column empty.
func (r *report) row(sec, what, name string, passed, blocked, failed int64) {
	f := ""
	if failed >= 0 {
		f = fmt.Sprint(failed)
	}
	line := fmt.Sprintf("%5s  %-7s  %s  %8d  %8d  %7s", sec, what, pad(name, r.nameW), passed, blocked, f)
	r.printf("%s\n", strings.TrimRight(line, " "))
}

// second writes the counts since the last call, labelled as second sec.
func (r *report) second(sec int) {
	label := fmt.Sprint(sec)
	for _, rs := range r.st.rules {
		r.row(label, "rule", rs.rule.Name, rs.passed.take(), rs.blocked.take(), -1)
		label = ""
	}
	for _, p := range r.st.patterns {
		r.row(label, "pattern", p.def.name, p.passed.take(), p.blocked.take(), p.failed.take())
		label = ""
	}
	r.printf("\n")
}

// summary writes the totals and the checks of a run that took elapsed, and
// returns an error when a request failed, a rule did not hold, or the output
// could not be written.
func (r *report) summary(elapsed time.Duration, interrupted bool) error {
	var requests, failed int64
	for _, p := range r.st.patterns {
		failed += p.failed.total.Load()
		requests += p.passed.total.Load() + p.blocked.total.Load() + p.failed.total.Load()
	}
	note := ""
	if interrupted {
		note = " (interrupted)"
	}
	r.printf("summary: %d requests in %.1fs%s\n", requests, elapsed.Seconds(), note)
	r.columns()
	for _, rs := range r.st.rules {
		r.row("all", "rule", rs.rule.Name, rs.passed.total.Load(), rs.blocked.total.Load(), -1)
	}
	for _, p := range r.st.patterns {
		r.row("all", "pattern", p.def.name, p.passed.total.Load(), p.blocked.total.Load(), p.failed.total.Load())
	}

	r.printf("\n%s\n%s\n",
		"checks: what each rule passed against the most it can allow over the whole",
		"run (the share is under 100% when traffic pressed the limit only at times):")
	var broken []string
	for _, rs := range r.st.rules {
		c := check(rs, elapsed)
		r.wrap(fmt.Sprintf("  %s  %-4s  ", pad(rs.rule.Name, r.nameW), c.status), c.text)
		if c.status == statusFail {
			broken = append(broken, rs.rule.Name)
		}
	}
	if n := r.st.unknown.Load(); n > 0 {
		r.printf("note: %d blocked answers named no rule in force\n", n)
	}

	var errs []error
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d requests failed; the first: %v", failed, *r.st.firstErr.Load()))
	}
	if len(broken) > 0 {
		errs = append(errs, fmt.Errorf("rules that let more through than their limit allows: %s", strings.Join(broken, ", ")))
	}
	if r.err != nil {
		errs = append(errs, fmt.Errorf("writing the output: %w", r.err))
	}
	return errors.Join(errs...)
}

// The statuses of a check.
const (
	statusHeld = "held"
	statusFail = "FAIL"
	statusNone = "n/a"
)

// checkResult is the verdict on one rule.
type checkResult struct {
	status string // statusHeld, statusFail or statusNone
	text   string
}

// check tells whether the rule of rs held over a run of elapsed: a windowed
// rule passed no more than allowed(...), a concurrency rule never had more
// requests in the handlers than its limit.
func check(rs *ruleStat, elapsed time.Duration) checkResult {
	rule := rs.rule
	passed := rs.passed.total.Load()
	if passed+rs.blocked.total.Load() == 0 && rs.peak.Load() == 0 {
		return checkResult{statusNone, "no traffic"}
	}
	switch {
	case rule.Kind == core.KindConcurrency:
		peak := rs.peak.Load()
		return checkResult{verdict(peak <= rule.Limit),
			fmt.Sprintf("peak %d in flight vs limit %d", peak, rule.Limit)}
	case rule.Kind == core.KindFlow:
		return checkResult{verdict(passed <= allowed(rule, rule.Limit, elapsed)), against(rule, rule.Limit, passed, elapsed)}
	case rule.Kind == core.KindHotspot && rule.Algorithm == "concurrency":
		return checkResult{statusNone, "per-value requests in flight are not measured"}
	case rule.Kind == core.KindHotspot && rs.values != nil:
		return checkValues(rs, elapsed)
	case rule.Kind == core.KindHotspot:
		return checkResult{statusNone, "the demo does not count per value of " + clean(rule.Param)}
	default:
		return checkResult{statusNone, "kind " + clean(string(rule.Kind)) + " is not checked"}
	}
}

// checkValues checks a hotspot rule on X-User-ID user by user, and reports
// the user closest to (or furthest over) its bound and how often the other
// users were blocked.
func checkValues(rs *ruleStat, elapsed time.Duration) checkResult {
	rule := rs.rule
	users := make([]string, 0, len(rs.values))
	for u := range rs.values {
		users = append(users, u)
	}
	slices.Sort(users)
	worst, worstRatio := "", -1.0
	var held = true
	for _, u := range users {
		v := rs.values[u]
		if v.passed.Load()+v.blocked.Load() == 0 {
			continue
		}
		limit := valueLimit(rule, u)
		bound := allowed(rule, limit, elapsed)
		passed := v.passed.Load()
		held = held && passed <= bound
		ratio := float64(passed) / float64(bound)
		if bound == 0 {
			ratio = 0
			if passed > 0 {
				ratio = math.Inf(1)
			}
		}
		if ratio > worstRatio {
			worst, worstRatio = u, ratio
		}
	}
	if worst == "" {
		return checkResult{statusNone, "no traffic"}
	}
	var othersBlocked int64
	for _, u := range users {
		if u != worst {
			othersBlocked += rs.values[u].blocked.Load()
		}
	}
	passed := rs.values[worst].passed.Load()
	return checkResult{verdict(held), fmt.Sprintf("%s: %s; others %d blocked",
		clean(worst), against(rule, valueLimit(rule, worst), passed, elapsed), othersBlocked)}
}

// valueLimit returns the limit of value under a hotspot rule.
func valueLimit(rule core.Rule, value string) int64 {
	if l, ok := rule.Overrides[value]; ok {
		return l
	}
	return rule.Limit
}

// allowed returns the most requests that rule, with limit per window (its
// own, or an override's), can pass in a run of elapsed. A token bucket
// starts full (limit + burst) and refills limit per window, continuously.
// Every other algorithm passes at most limit in each aligned window (or
// bucket-aligned, for the leap array), and a run of elapsed overlaps at most
// ceil(elapsed/window) + 1 of those.
func allowed(rule core.Rule, limit int64, elapsed time.Duration) int64 {
	w := rule.Window
	if rule.Algorithm == "token-bucket" {
		refill := (limit*int64(elapsed) + int64(w) - 1) / int64(w) // ceil; no overflow below ~9e9 req/s-s
		return limit + rule.Burst + refill
	}
	return limit*windowsTouched(w, elapsed) + rule.Burst
}

// windowsTouched is how many aligned windows of w a run of elapsed
// overlaps at most: ceil(elapsed/w) + 1.
func windowsTouched(w, elapsed time.Duration) int64 {
	return int64((elapsed+w-1)/w) + 1
}

// against says how passed compares with what rule, with limit per window,
// allows over a run of elapsed, and why it allows that much:
// "161 passed of 350 allowed (46%; 50 per 1s window, 7 windows touched in 5.0s)".
func against(rule core.Rule, limit, passed int64, elapsed time.Duration) string {
	bound := allowed(rule, limit, elapsed)
	why := fmt.Sprintf("%d per %s window, %d windows touched in %.1fs", limit, rule.Window, windowsTouched(rule.Window, elapsed), elapsed.Seconds())
	if rule.Algorithm == "token-bucket" {
		why = fmt.Sprintf("a full bucket of %d, then %d per %s for %.1fs", limit+rule.Burst, limit, rule.Window, elapsed.Seconds())
	}
	if passed > bound {
		return fmt.Sprintf("%d passed, MORE than the %d allowed (%s)", passed, bound, why)
	}
	share := 100.0
	if bound > 0 {
		share = 100 * float64(passed) / float64(bound)
	}
	return fmt.Sprintf("%d passed of %d allowed (%.0f%%; %s)", passed, bound, share, why)
}

func verdict(ok bool) string {
	if ok {
		return statusHeld
	}
	return statusFail
}

// describe says what a rule limits, in one sentence.
func describe(r core.Rule) string {
	res := clean(r.Resource)
	switch r.Kind {
	case core.KindConcurrency:
		return fmt.Sprintf("concurrency on %s: %d in flight", res, r.Limit)
	case core.KindFlow:
		return fmt.Sprintf("flow on %s: %d per %s (%s%s)", res, r.Limit, r.Window, clean(string(r.Algorithm)), extras(r))
	case core.KindHotspot:
		var s string
		if r.Algorithm == "concurrency" {
			s = fmt.Sprintf("hotspot on %s: %d in flight per %s", res, r.Limit, clean(r.Param))
		} else {
			s = fmt.Sprintf("hotspot on %s: %d per %s per %s (%s%s)", res, r.Limit, r.Window, clean(r.Param), clean(string(r.Algorithm)), extras(r))
		}
		return s + overrides(r.Overrides)
	case core.KindBreaker:
		return fmt.Sprintf("breaker on %s: %s >= %v of >= %d in %s, open %s", res, clean(string(r.Strategy)), r.Threshold, r.MinRequests, r.Window, r.OpenFor)
	default:
		return fmt.Sprintf("%s on %s", clean(string(r.Kind)), res)
	}
}

// extras describes the optional settings of a windowed rule.
func extras(r core.Rule) string {
	var b strings.Builder
	if r.Burst > 0 {
		fmt.Fprintf(&b, ", burst %d", r.Burst)
	}
	if r.MaxWait > 0 {
		fmt.Fprintf(&b, ", maxWait %s", r.MaxWait)
	}
	if r.Warmup > 0 {
		fmt.Fprintf(&b, ", warmup %s from 1/%d", r.Warmup, r.ColdFactor)
	}
	return b.String()
}

// overrides describes a hotspot rule's overrides: the first three in value
// order and how many more.
func overrides(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, 4)
	for _, k := range keys[:min(3, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s=%d", clean(k), m[k]))
	}
	if len(keys) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", len(keys)-3))
	}
	return ", overrides " + strings.Join(parts, ", ")
}

// clean returns s printable (see printable) and cut to 200 characters.
func clean(s string) string {
	const maxLen = 200
	s = printable(s)
	if utf8.RuneCountInString(s) <= maxLen {
		return s
	}
	return string([]rune(s)[:maxLen]) + "..."
}

// printable replaces what a terminal should not print (control characters,
// invalid UTF-8) with '?'.
func printable(s string) string {
	return strings.Map(func(c rune) rune {
		if c == utf8.RuneError || !unicode.IsPrint(c) {
			return '?'
		}
		return c
	}, s)
}

// pad returns s cleaned, cut to n characters (marking the cut with '~') and
// padded with spaces to n.
func pad(s string, n int) string {
	s = clean(s)
	if c := utf8.RuneCountInString(s); c > n {
		rs := []rune(s)
		return string(rs[:n-1]) + "~"
	} else if c < n {
		return s + strings.Repeat(" ", n-c)
	}
	return s
}
