package sluiceenvoy

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// Unit is the unit of a limit of the envoyproxy/ratelimit config format, as
// its files spell it (lowercase or uppercase), with the length the reference
// server gives it: a month is 30 days, a year 365.
type Unit string

// The units of the config format.
const (
	UnitSecond Unit = "second"
	UnitMinute Unit = "minute"
	UnitHour   Unit = "hour"
	UnitDay    Unit = "day"
	UnitWeek   Unit = "week"
	UnitMonth  Unit = "month"
	UnitYear   Unit = "year"
)

// Duration returns the length of u, 0 for an unknown unit.
func (u Unit) Duration() time.Duration {
	const day = 24 * time.Hour
	switch u {
	case UnitSecond:
		return time.Second
	case UnitMinute:
		return time.Minute
	case UnitHour:
		return time.Hour
	case UnitDay:
		return day
	case UnitWeek:
		return 7 * day
	case UnitMonth:
		return 30 * day
	case UnitYear:
		return 365 * day
	}
	return 0
}

// Domain is one file of the envoyproxy/ratelimit config format: a domain and
// its tree of descriptors.
type Domain struct {
	Name        string
	Descriptors []Descriptor
	// File names the file the domain was read from, in errors.
	File string
}

// Descriptor is one node of a domain's tree: it matches a request's
// descriptor entry by Key and, when set, Value (a '*' in Key or Value
// matches any run of characters, as the reference server matches them);
// RateLimit is its limit, when the request's descriptor ends at it.
type Descriptor struct {
	Key         string
	Value       string
	RateLimit   *RateLimit
	Descriptors []Descriptor
	ShadowMode  bool
	// ShareThreshold, on a descriptor with a '*', makes every value it
	// matches share one count (the reference's share_threshold).
	ShareThreshold bool
	// Line is the line of the descriptor in its file, 0 when unknown.
	Line int
}

// RateLimit is a descriptor's limit: RequestsPerUnit per Unit, or none at
// all when Unlimited. Name is what other limits' Replaces name it by.
// Algorithm, from the sluice extension key `sluice: {algorithm: ...}`,
// overrides the server's default (see WithRuleDefaults).
type RateLimit struct {
	Unit            Unit
	RequestsPerUnit uint32
	Unlimited       bool
	Name            string
	Replaces        []string
	Algorithm       core.Algorithm
}

// Config is what a Server serves: domains of the envoyproxy/ratelimit config
// format, and sluice rules for the domains of none of them (see the package
// documentation for how a request maps to their resources and params).
type Config struct {
	Domains []Domain
	Rules   []core.Rule
	// files is the fingerprint of the files LoadFiles read the config
	// from (see fingerprint), zero for a Config made otherwise: a Watcher
	// of the same paths starts from it.
	files [32]byte
}

// ParseDomain reads one file of the envoyproxy/ratelimit config format.
// name names the file in errors. It refuses what the reference server
// refuses (an unknown key, an empty key or domain, an invalid unit, a unit
// with unlimited, a duplicate descriptor, an empty or self replaces) and
// a requests_per_unit that is not a 32-bit unsigned integer; each error
// gives the file and line.
func ParseDomain(name string, data []byte) (Domain, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Domain{}, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{file: name}
	d := Domain{File: name}
	if len(root.Content) == 0 {
		return d, fmt.Errorf("%s: empty file: want a mapping with domain and descriptors", name)
	}
	top := root.Content[0]
	p.mapping(top, "", func(k string, v *yaml.Node) {
		switch k {
		case "domain":
			d.Name = p.str(v, "domain")
		case "descriptors":
			d.Descriptors = p.descriptors(v, "descriptors")
		default:
			p.errf(v, "unknown key %s (want domain or descriptors)", core.Quote(k))
		}
	})
	if d.Name == "" && len(p.errs) == 0 {
		p.errf(top, "domain must not be empty")
	}
	return d, errors.Join(p.errs...)
}

type parser struct {
	file string
	errs []error
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.file, n.Line, fmt.Sprintf(format, args...)))
}

func (p *parser) mapping(n *yaml.Node, where string, f func(k string, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.errf(n, "%s must be a mapping", cmp.Or(where, "the file"))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		f(n.Content[i].Value, n.Content[i+1])
	}
}

func (p *parser) str(n *yaml.Node, where string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errf(n, "%s must be a string", where)
		return ""
	}
	return n.Value
}

func (p *parser) boolean(n *yaml.Node, where string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		p.errf(n, "%s must be true or false, got %s", where, core.Quote(n.Value))
	}
	return b
}

func (p *parser) descriptors(n *yaml.Node, where string) []Descriptor {
	if n.Kind != yaml.SequenceNode {
		if n.Tag != "!!null" {
			p.errf(n, "%s must be a list", where)
		}
		return nil
	}
	var ds []Descriptor
	seen := map[string]bool{}
	for i, c := range n.Content {
		at := fmt.Sprintf("%s[%d]", where, i)
		d := Descriptor{Line: c.Line}
		p.mapping(c, at, func(k string, v *yaml.Node) {
			switch k {
			case "key":
				d.Key = p.str(v, at+".key")
			case "value":
				d.Value = p.str(v, at+".value")
			case "rate_limit":
				d.RateLimit = p.rateLimit(v, at+".rate_limit")
			case "descriptors":
				d.Descriptors = p.descriptors(v, at+".descriptors")
			case "shadow_mode":
				d.ShadowMode = p.boolean(v, at+".shadow_mode")
			case "share_threshold":
				d.ShareThreshold = p.boolean(v, at+".share_threshold")
			case "detailed_metric", "value_to_metric":
				p.boolean(v, at+"."+k) // they name the reference's statistics only
			case "quota_mode", "metadata":
				p.errf(v, "%s.%s is a key of the reference server that sluice does not implement", at, k)
			default:
				p.errf(v, "%s: unknown key %s (want key, value, rate_limit, descriptors, shadow_mode, share_threshold, detailed_metric or value_to_metric)", at, core.Quote(k))
			}
		})
		if d.Key == "" {
			p.errf(c, "%s.key must not be empty", at)
			continue
		}
		fk := finalKey(d.Key, d.Value)
		if seen[fk] {
			p.errf(c, "%s: duplicate descriptor %s", at, core.Quote(fk))
		}
		seen[fk] = true
		if d.ShareThreshold && !strings.Contains(fk, "*") {
			p.errf(c, "%s: share_threshold needs a '*' in key or value, got %s", at, core.Quote(fk))
		}
		if d.RateLimit != nil && d.RateLimit.Name != "" && slices.Contains(d.RateLimit.Replaces, d.RateLimit.Name) {
			p.errf(c, "%s.rate_limit.replaces must not name the limit itself (%s)", at, core.Quote(d.RateLimit.Name))
		}
		ds = append(ds, d)
	}
	return ds
}

func (p *parser) rateLimit(n *yaml.Node, at string) *RateLimit {
	rl := &RateLimit{}
	unit := ""
	p.mapping(n, at, func(k string, v *yaml.Node) {
		switch k {
		case "unit":
			unit = p.str(v, at+".unit")
		case "requests_per_unit":
			u, err := strconv.ParseUint(v.Value, 10, 32)
			if v.Kind != yaml.ScalarNode || err != nil {
				p.errf(v, "%s.requests_per_unit must be an integer from 0 to %d, got %s", at, uint32(1<<32-1), core.Quote(v.Value))
			}
			rl.RequestsPerUnit = uint32(u)
		case "unlimited":
			rl.Unlimited = p.boolean(v, at+".unlimited")
		case "name":
			rl.Name = p.str(v, at+".name")
		case "replaces":
			if v.Kind != yaml.SequenceNode {
				p.errf(v, "%s.replaces must be a list of {name: ...}", at)
				return
			}
			for i, r := range v.Content {
				name := ""
				p.mapping(r, fmt.Sprintf("%s.replaces[%d]", at, i), func(k string, v *yaml.Node) {
					if k != "name" {
						p.errf(v, "%s.replaces[%d]: unknown key %s (want name)", at, i, core.Quote(k))
						return
					}
					name = p.str(v, "name")
				})
				if name == "" {
					p.errf(r, "%s.replaces[%d].name must not be empty", at, i)
				}
				rl.Replaces = append(rl.Replaces, name)
			}
		case "sluice":
			p.mapping(v, at+".sluice", func(k string, v *yaml.Node) {
				if k != "algorithm" {
					p.errf(v, "%s.sluice: unknown key %s (want algorithm)", at, core.Quote(k))
					return
				}
				rl.Algorithm = core.Algorithm(p.str(v, at+".sluice.algorithm"))
			})
		default:
			p.errf(v, "%s: unknown key %s (want unit, requests_per_unit, unlimited, name, replaces or sluice)", at, core.Quote(k))
		}
	})
	u := Unit(strings.ToLower(unit))
	switch {
	case rl.Unlimited && unit != "":
		p.errf(n, "%s: unlimited takes no unit (got %s)", at, core.Quote(unit))
	case !rl.Unlimited && u.Duration() == 0:
		p.errf(n, "%s.unit must be second, minute, hour, day, week, month or year, got %s", at, core.Quote(unit))
	default:
		rl.Unit = u
	}
	return rl
}

// finalKey is the reference server's name of a descriptor node: its key, or
// key_value. Two nodes, or a node and a request entry, with the same final
// key are the same, as there ("a_b" with "c" is "a" with "b_c").
func finalKey(key, value string) string {
	if value == "" {
		return key
	}
	return key + "_" + value
}

// LoadFiles reads the config files at paths, and the .yaml, .yml and .json
// files of the directories among them (not of their subdirectories), in
// name order, each a regular file of at most 16 MiB: a YAML file whose top level has the key domain is a domain of
// the envoyproxy/ratelimit format, any other a sluice rules file (package
// rulesfile). It returns every problem, each with its file and line; two
// files of one domain are a problem, as in the reference server (whose
// MERGE_DOMAIN_CONFIG sluice does not implement).
func LoadFiles(paths ...string) (Config, error) {
	files, err := configFiles(paths)
	if err != nil {
		return Config{}, err
	}
	var c Config
	var errs []error
	domains := map[string]string{}
	h := sha256.New()
	for _, f := range files {
		data, err := readConfig(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		hashFile(h, f, data)
		if !isDomainFile(data) {
			rules, err := rulesfile.Parse(data)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f, err))
				continue
			}
			c.Rules = append(c.Rules, rules...)
			continue
		}
		d, err := ParseDomain(f, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prev, dup := domains[d.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: domain %s is also the domain of %s", f, core.Quote(d.Name), prev))
			continue
		}
		domains[d.Name] = f
		c.Domains = append(c.Domains, d)
	}
	h.Sum(c.files[:0])
	return c, errors.Join(errs...)
}

// fingerprint hashes the names and contents of the config files at paths,
// as LoadFiles reads them.
func fingerprint(paths []string) ([32]byte, error) {
	var out [32]byte
	files, err := configFiles(paths)
	if err != nil {
		return out, err
	}
	h := sha256.New()
	for _, f := range files {
		data, err := readConfig(f)
		if err != nil {
			return out, err
		}
		hashFile(h, f, data)
	}
	h.Sum(out[:0])
	return out, nil
}

// hashFile adds the config file named f, holding data, to a fingerprint.
func hashFile(h hash.Hash, f string, data []byte) {
	fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
	h.Write(data)
}

// configFiles returns the config files of paths, as LoadFiles reads them.
func configFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			ext := filepath.Ext(e.Name())
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	for _, f := range files {
		// Reading a named pipe no process writes to blocks for ever (the
		// Watcher's Close with it), and a device may never end.
		if fi, err := os.Stat(f); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: a config file must be a regular file, got mode %s", f, fi.Mode().Type())
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no config file in %s", strings.Join(paths, ", "))
	}
	return files, nil
}

// maxConfigSize bounds the size of a config file: 16 MiB, a rules file's
// bound (package rulesfile).
const maxConfigSize = 16 << 20

// readConfig reads the config file at path, refusing one over
// maxConfigSize without reading more of it.
func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err == nil && len(data) > maxConfigSize {
		err = fmt.Errorf("%s: a config file must be at most %d bytes", path, maxConfigSize)
	}
	return data, err
}

// isDomainFile reports whether data is a YAML mapping with the key domain.
func isDomainFile(data []byte) bool {
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["domain"]
	return ok
}
