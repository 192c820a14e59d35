package extractors

import (
	"net/url"
	"strings"
)

// Modes of reading the values of a param from its source lines.
const (
	modeList   = iota // comma-separated elements of each line, trimmed, non-empty
	modePlain         // each line one value, as is, non-empty
	modeQuery         // '&'-separated key=value pairs of a raw query whose key is the name
	modeCookie        // ';'-separated name=value pairs of Cookie lines whose name is the name
)

// cursor remembers which param was read last and where in its source its
// last value was found, so that Enter reading values 0, 1, 2... parses the
// param once and scans its source once. It is small because it lives in the
// one allocation a request's params cost.
type cursor struct {
	sp   *spec // the param the cursor is on; nil: none
	next int32 // the index of the value the cursor stands before
	line int32 // position in the source: line index and byte offset
	off  int32
	end  bool // the source holds no value at index next or beyond
}

// maxLine bounds the bytes of one source line that are read, so that cursor
// offsets fit in an int32. Real sources are far shorter (net/http reads at
// most 1 MiB of headers by default).
const maxLine = 1<<31 - 1

// start puts the cursor on sp, at the start of its source.
func (c *cursor) start(sp *spec) {
	c.sp, c.next, c.line, c.off, c.end = sp, 0, 0, 0, false
}

// lookup returns the spec of param: the cursor's when it is on param, else
// the Extractor's (cached) parse.
func (x *Extractor) lookup(c *cursor, param string) *spec {
	if c.sp != nil && c.sp.param == param {
		return c.sp
	}
	return x.spec(param)
}

// value returns the i-th value of the cursor's param from its source lines
// read in mode, applying the caps: values beyond the first maxValues-1 of a
// param with more than maxValues values are folded into overflowValue, and
// values are truncated to maxValueLen bytes. After finding a value it looks
// one value ahead, so that asking for the value after the last one is cheap.
func (x *Extractor) value(c *cursor, lines []string, mode, i int) (string, bool) {
	if i < 0 || i >= x.maxValues {
		return "", false
	}
	if i == 0 && mode == modeList && len(lines) == 1 && strings.IndexByte(lines[0], ',') < 0 {
		// The common case, one line holding one value (or none), without
		// scanning: what scan and the look ahead would find.
		c.start(c.sp)
		c.end = true
		v := trimOWS(lines[0])
		if v == "" {
			return "", false
		}
		c.next = 1
		return truncate(v, x.maxValueLen), true
	}
	if int(c.next) > i {
		c.start(c.sp)
	}
	var v string
	for int(c.next) <= i {
		if c.end {
			return "", false
		}
		var ok bool
		if v, ok = c.scan(lines, mode); !ok {
			c.end = true
			return "", false
		}
		c.next++
	}
	ahead := *c
	if _, more := ahead.scan(lines, mode); !more {
		c.end = true
	} else if i == x.maxValues-1 {
		return overflowValue, true
	}
	if mode == modeQuery && strings.ContainsAny(v, "%+") {
		v, _ = url.QueryUnescape(v) // scan checked the escapes
	}
	return truncate(v, x.maxValueLen), true
}

// scan returns the next value of the cursor's param in lines after the
// cursor, and advances the cursor past it.
func (c *cursor) scan(lines []string, mode int) (string, bool) {
	for int(c.line) < len(lines) && c.line < maxLine {
		line := lines[c.line]
		if mode == modePlain {
			c.line++
			if line != "" {
				return line, true
			}
			continue
		}
		if len(line) > maxLine-1 {
			line = line[:maxLine-1]
		}
		if int(c.off) > len(line) {
			c.line++
			c.off = 0
			continue
		}
		rest := line[c.off:]
		elem := rest
		if j := strings.IndexByte(rest, separator(mode)); j >= 0 {
			elem = rest[:j]
			c.off += int32(j) + 1
		} else {
			c.off = int32(len(line)) + 1
		}
		if v, ok := accept(c.sp, mode, elem); ok {
			return v, true
		}
	}
	return "", false
}

// separator returns the byte separating the elements of a line in mode.
func separator(mode int) byte {
	switch mode {
	case modeQuery:
		return '&'
	case modeCookie:
		return ';'
	}
	return ','
}

// accept returns the value elem holds for sp in mode, if any. Query values
// are returned raw (value decodes them) after checking their escapes.
func accept(sp *spec, mode int, elem string) (string, bool) {
	switch mode {
	case modeList:
		elem = trimOWS(elem)
		return elem, elem != ""
	case modeCookie:
		name, val, ok := strings.Cut(trimOWS(elem), "=")
		if !ok || name != sp.name {
			return "", false
		}
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		return val, val != ""
	case modeQuery:
		// As url.ParseQuery: a pair holding ';' or a bad escape is skipped.
		if strings.IndexByte(elem, ';') >= 0 {
			return "", false
		}
		key, val, _ := strings.Cut(elem, "=")
		if val == "" || !queryKeyIs(key, sp.name) || !validEscapes(val) {
			return "", false
		}
		return val, true
	}
	return "", false
}

// trimOWS removes the optional white space (spaces and tabs) around s.
func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// queryKeyIs reports whether the raw (query-escaped) key decodes to name,
// without allocating. A key with a bad escape matches nothing.
func queryKeyIs(raw, name string) bool {
	j := 0
	for i := 0; i < len(raw); {
		b := raw[i]
		switch b {
		case '+':
			b = ' '
			i++
		case '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return false
			}
			b = unhex(raw[i+1])<<4 | unhex(raw[i+2])
			i += 3
		default:
			i++
		}
		if j >= len(name) || name[j] != b {
			return false
		}
		j++
	}
	return j == len(name)
}

// validEscapes reports whether every '%' in s starts a %XX escape.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
