package doctext

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Phrase is a value as one documentation file states it: the first group
// of Pattern must read Want, the constant written the way that file
// writes it.
type Phrase struct {
	Path, Pattern, Want string
}

// Stated returns, for each match of pattern in the text of the file at
// path, read as Prose (so a phrase may wrap), its first submatch: a value
// the text states. Stated fails t when the file cannot be read or pattern
// matches nothing, so that a reworded phrase is noticed rather than no
// longer checked.
func Stated(t testing.TB, path, pattern string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("doctext: %v", err)
	}
	var vals []string
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(Prose(string(b)), -1) {
		vals = append(vals, m[1])
	}
	if len(vals) == 0 {
		t.Errorf("doctext: %s states nothing matching %q", path, pattern)
	}
	return vals
}

// Check fails t unless every value each phrase's pattern finds in its file
// (see Stated) is its Want.
func Check(t testing.TB, phrases ...Phrase) {
	t.Helper()
	for _, p := range phrases {
		for _, v := range Stated(t, p.Path, p.Pattern) {
			if v != p.Want {
				t.Errorf("%s states %q where the code has %q (pattern %q)", p.Path, v, p.Want, p.Pattern)
			}
		}
	}
}

// Duration writes d as docs do: as time.Duration.String without its zero
// trailing units, "5m" for 5m0s, "1h" for 1h0m0s.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Prose returns text with the comment markers at line starts dropped and
// each run of white space made one space.
func Prose(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(strings.TrimSpace(l), "//")
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}

// Every writes a period as prose does after "every": "half second" for
// 500ms, "second" for 1s, else as Duration does.
func Every(d time.Duration) string {
	switch d {
	case time.Second / 2:
		return "half second"
	case time.Second:
		return "second"
	}
	return Duration(d)
}

// Thousands writes n with comma separators, as prose does: "100,000".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
