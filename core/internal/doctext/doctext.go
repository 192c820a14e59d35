// Package doctext reads the values a documentation text states, for the
// tests that check each stated default against the constant the code
// uses: a change to either fails them.
package doctext

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Stated returns, for each match of pattern in the text of the file at
// path, its first submatch: a value the text states. The text is read as
// prose: comment markers ("//") at line starts are dropped and each run of
// white space is one space, so a phrase may wrap. Stated fails t when the
// file cannot be read or pattern matches nothing, so that a reworded
// phrase is noticed rather than no longer checked.
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

// Check fails t unless every value that pattern finds in the file at path
// (see Stated) is want.
func Check(t testing.TB, want, path, pattern string) {
	t.Helper()
	for _, v := range Stated(t, path, pattern) {
		if v != want {
			t.Errorf("%s states %q where the code has %q (pattern %q)", path, v, want, pattern)
		}
	}
}

// Prose returns text with the comment markers at line starts dropped and
// each run of white space made one space.
func Prose(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "//")
		lines[i] = l
	}
	return strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
}
