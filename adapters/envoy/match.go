package sluiceenvoy

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/sluicekit/sluice/core"
)

// descriptorParam is the custom param of the hotspot rules of descriptors
// whose request values vary (a descriptor without value, or with a
// wildcard): its value is the request descriptor's entries (see
// appendEntries), so that each distinct descriptor has its own count, as in
// the reference server.
const descriptorParam = "descriptor"

// node is a descriptor of a domain's tree, compiled.
type node struct {
	children map[string]*node // by final key
	// wildcards are the final keys of the children with a '*', split on
	// it, in the order of the file (the first that matches wins).
	wildcards []wildcard
	leaf      *leaf
	// share is the value pattern of a share_threshold descriptor: the
	// value its entry counts under, whatever the request's.
	share string
}

type wildcard struct {
	key   string
	parts []string
}

// leaf is a limit of the tree: a rule of the Guard, unless unlimited.
type leaf struct {
	rl       RateLimit
	shadow   bool
	resource string // the rule's resource and name; "" when unlimited
	hotspot  bool   // the rule is keyed by the descriptor's entries
	limit    int64
	stats    *leafStats // nil when unlimited
}

// leafStats count the hits of a limit, as the reference server's statistics
// of the same names do.
type leafStats struct {
	domain, key                             string
	totalHits, overLimit, nearLimit, within atomic.Uint64
}

// domain is a compiled Domain.
type domain struct {
	root  node
	rules []core.Rule // of its limits
}

// compile builds the trees of ds and the rules of their limits, each rule
// made from defaults (see WithRuleDefaults).
func compile(ds []Domain, defaults core.Rule, prev map[string]*leafStats) (map[string]*domain, []core.Rule, map[string]*leafStats, error) {
	c := &compiler{names: map[string]bool{}, defaults: defaults, prev: prev, stats: map[string]*leafStats{}}
	out := make(map[string]*domain, len(ds))
	for _, d := range ds {
		if _, dup := out[d.Name]; dup {
			return nil, nil, nil, fmt.Errorf("%s: domain %s twice", d.File, core.Quote(d.Name))
		}
		dom := &domain{}
		c.domain = d.Name
		first := len(c.rules)
		c.nodes(&dom.root, d.Name, d.Descriptors, false)
		dom.rules = c.rules[first:len(c.rules):len(c.rules)]
		out[d.Name] = dom
	}
	return out, c.rules, c.stats, nil
}

type compiler struct {
	names    map[string]bool
	rules    []core.Rule
	defaults core.Rule
	domain   string
	// prev are the statistics of the config in force, by rule name, which
	// the limits this one keeps take over; stats are this one's.
	prev, stats map[string]*leafStats
}

func (c *compiler) nodes(n *node, path string, ds []Descriptor, varies bool) {
	n.children = make(map[string]*node, len(ds))
	for _, dd := range ds {
		fk := finalKey(dd.Key, dd.Value)
		child := &node{}
		n.children[fk] = child
		wild := strings.Contains(fk, "*")
		if dd.ShareThreshold {
			child.share = strings.TrimPrefix(fk, dd.Key+"_")
		}
		if wild {
			n.wildcards = append(n.wildcards, wildcard{key: fk, parts: strings.Split(fk, "*")})
		}
		p := path + "." + fk
		v := varies || wild || dd.Value == ""
		if dd.RateLimit != nil {
			child.leaf = c.leaf(p, *dd.RateLimit, dd.ShadowMode, v)
		}
		c.nodes(child, p, dd.Descriptors, v)
	}
}

func (c *compiler) leaf(path string, rl RateLimit, shadow, varies bool) *leaf {
	l := &leaf{rl: rl, shadow: shadow}
	if rl.Unlimited {
		return l
	}
	key := strings.TrimPrefix(path, c.domain+".")
	l.resource = c.uniqueName(path, key)
	l.hotspot = varies
	l.limit = int64(rl.RequestsPerUnit)
	l.stats = c.prev[l.resource]
	if l.stats == nil {
		l.stats = &leafStats{domain: c.domain, key: key}
	}
	c.stats[l.resource] = l.stats
	r := c.defaults
	r.Name, r.Resource, r.Limit, r.Window, r.Shadow = l.resource, l.resource, l.limit, rl.Unit.Duration(), shadow
	if rl.Algorithm != "" {
		r.Algorithm = rl.Algorithm
	}
	if varies {
		r.Kind, r.Param = core.KindHotspot, descriptorParam
	} else {
		r.Kind, r.MaxKeys = core.KindFlow, 0
	}
	c.rules = append(c.rules, r)
	return l
}

// uniqueName returns path, of the limit of key in c.domain, as a rule
// name: its bytes that rule names do not allow replaced by '_', '*' and '/'
// included (the name is also a resource, and must be no glob), cut to 190
// bytes, with a suffix #2, #3, ... when an earlier limit has the name, or
// another limit had it in the config in force (c.prev): a name, and so the
// counts and statistics it carries over, stays with its limit whatever the
// order of the domains (a.b.c is domain a's b.c and domain a.b's c).
func (c *compiler) uniqueName(path, key string) string {
	b := []byte(path)
	for i, ch := range b {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("-_.:$#()", ch) >= 0
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 190 {
		b = b[:190]
	}
	name := string(b)
	taken := func(name string) bool {
		p := c.prev[name]
		return c.names[name] || p != nil && (p.domain != c.domain || p.key != key)
	}
	for i := 2; taken(name); i++ {
		name = string(b) + "#" + strconv.Itoa(i)
	}
	c.names[name] = true
	return name
}

// match returns the limit of descriptor entries es in d, as the reference
// server finds it (config_impl.go, GetLimit): at each level the child whose
// final key is key_value, else the first wildcard child matching key_value,
// else the child whose final key is key; the limit applies only when it is
// at the level of the descriptor's last entry. nil when none. shares is nil,
// or, for a descriptor that a share_threshold wildcard matched, the value
// each entry counts under ("" for its own).
func (d *domain) match(es []*ratelimitv3.RateLimitDescriptor_Entry) (l *leaf, shares []string) {
	n := &d.root
	for i, e := range es {
		fk := e.Key + "_" + e.Value // as the reference writes it, "_" with no value
		next := n.children[fk]
		if next == nil {
			for _, w := range n.wildcards {
				if wildcardMatch(w.parts, fk) {
					next = n.children[w.key]
					if next.share != "" {
						if shares == nil {
							shares = make([]string, len(es))
						}
						shares[i] = next.share
					}
					break
				}
			}
		}
		if next == nil {
			next = n.children[e.Key]
		}
		if next == nil {
			return nil, nil
		}
		if i == len(es)-1 {
			return next.leaf, shares
		}
		if len(next.children) == 0 {
			return nil, nil
		}
		n = next
	}
	return nil, nil
}

// wildcardMatch reports whether s matches the pattern split on '*' into
// parts: each '*' matches any run of characters.
func wildcardMatch(parts []string, s string) bool {
	if len(parts) == 1 {
		return parts[0] == s
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

// appendEntries appends the entries of a descriptor as key=value pairs
// joined by ',', with '%', '=', ',' and bytes outside printable ASCII
// written %XX: the value of descriptorParam, one per distinct descriptor.
// An entry's value is shares[i] instead when shares has one.
func appendEntries(dst []byte, es []*ratelimitv3.RateLimitDescriptor_Entry, shares []string) []byte {
	for i, e := range es {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEscaped(dst, e.Key)
		dst = append(dst, '=')
		if shares != nil && shares[i] != "" {
			dst = appendEscaped(dst, shares[i])
			continue
		}
		dst = appendEscaped(dst, e.Value)
	}
	return dst
}

func appendEscaped(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c == '=' || c == ',' || c < 0x20 || c > 0x7e {
			dst = append(dst, '%', hex[c>>4], hex[c&0xf])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}
