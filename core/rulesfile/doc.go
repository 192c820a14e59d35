// Package rulesfile reads sluice rules from YAML and JSON files, with every
// problem given its line, and keeps a Guard's rules in step with a file
// while it serves.
//
// NewGuard starts a Guard with the rules of a file; Load and Parse return
// them, validated and normalized, for tools (the sluicecheck command) and
// for rules put together from several places. A Watcher applies each new
// version of the file to a running Guard. Schema is the file's JSON Schema,
// for editors; Rules decodes a rules list kept in another configuration
// file. Package core validates the rules (core.NormalizeRules, core.New,
// core.Guard.SetRules) and documents what each kind does; this package
// reads the file and gives each problem core finds the line of its rule and
// field. Rules on their way from a file to a Guard are validated once, by
// core.
//
// # Grammar
//
// A rules file is YAML, or JSON when its name ends in .json, with the same
// fields, in UTF-8 (a byte order mark first is allowed). Its one key, rules, holds a list of rules, each a mapping of the
// fields of core.Rule named as in its json tags; durations are Go durations
// ("1.5s", "500ms"). Unknown fields and values are errors. Every field:
//
//	rules:
//	  - name: items-rate               # optional; unique; letters, digits, -_.:/{}*$#()
//	    resource: "GET /items/{id}"    # a resource, or a glob: "GET /items/*", "/pkg.Svc/*", "*"
//	    kind: flow                     # flow | concurrency | hotspot | breaker | adaptive | system
//	    limit: 100                     # requests per window (flow, hotspot); in flight (concurrency)
//	    window: 1s                     # default 1s
//	    algorithm: leap-array          # leap-array (default) | sliding-log | sliding-counter |
//	    buckets: 10                    #   fixed-window | token-bucket | leaky-bucket; leap-array buckets
//	  - resource: "GET /search"
//	    kind: flow
//	    algorithm: token-bucket
//	    limit: 50
//	    burst: 20                      # token-bucket: tokens above limit
//	  - resource: "POST /orders"
//	    kind: flow
//	    algorithm: leaky-bucket
//	    limit: 20
//	    maxWait: 500ms                 # leaky-bucket: longest a request waits for its turn
//	  - resource: "GET /reports"
//	    kind: flow
//	    limit: 300
//	    warmup: 30s                    # ramp from limit/coldFactor to limit
//	    coldFactor: 3
//	  - name: global-search
//	    resource: "GET /search/*"
//	    kind: flow                     # or hotspot
//	    limit: 5000                    # for all instances together
//	    store: redis                   # the name given to core.WithStore
//	    mode: exact                    # exact (default) | approximate
//	    onFailure: local               # store failing: local (default) | open | closed
//	    localLimit: 1000               # this instance's limit while the store fails; default limit
//	  - name: per-user
//	    resource: "GET /items/{id}"
//	    kind: hotspot
//	    param: "header:X-User-ID"      # the request value to limit by (package extractors)
//	    limit: 10                      # per value, per window
//	    algorithm: token-bucket        # token-bucket (default) | leaky-bucket | concurrency (in flight)
//	    burst: 5
//	    maxKeys: 100000                # values tracked (default 100000)
//	    overrides:                     # per-value limits; 0 blocks the value
//	      vip: 1000
//	      abuser: 0
//	    onMissing: skip                # request without the param: skip (default) | reject | shared
//	  - name: payments-breaker
//	    resource: "POST /pay"
//	    kind: breaker
//	    strategy: error-ratio          # slow-ratio | error-ratio | error-count
//	    threshold: 0.5                 # a ratio in (0, 1]; for error-count, a number of errors
//	    maxRT: 0s                      # slow-ratio: slower than this is slow
//	    minRequests: 10                # completed requests before it may trip (default 10)
//	    window: 10s                    # statistics window (default 10s), in buckets (default 10)
//	    openFor: 5s                    # open this long, then let probes through (default 5s)
//	    probes: 1                      # half-open: requests let through; all must succeed (default 1)
//	  - resource: "*"
//	    kind: concurrency
//	    limit: 200
//	  - name: api-adaptive
//	    resource: "GET /api/*"
//	    kind: adaptive                 # an in-flight limit found from response times
//	    minLimit: 2                    # bounds (defaults 2 and 1000)
//	    maxLimit: 1000
//	    priority: "header:X-Priority"  # adaptive, system: shed sheddable, then default, then critical
//	  - name: cpu
//	    resource: "*"
//	    kind: system
//	    signal: cpu                    # qps | inflight | rt | cpu | load
//	    threshold: 0.8                 # cpu: a fraction in (0, 1]
//	    strategy: bbr                  # cpu only
//	    shadow: true                   # any kind: evaluated and counted, never enforced
//
// Fields that do not apply to a rule's kind or algorithm are errors. The
// defaults, bounds and meaning of each are in core.Rule's documentation.
//
// # Errors
//
// Every problem names the file, the line, the rule (index and name), the
// field, the value and what is allowed:
//
//	rules file rules.yaml: rules[2] (per-user): line 9: limit must be >= 0, got -5
//
// An integer beyond 64 bits (decimal, 0x, 0o or 0b) gets its field's own
// bound too: "limit must be >= 0, got -0x10000000000000000".
// An integer with a leading 0 ("limit: 0100": YAML 1.1 octal 64, YAML 1.2
// decimal 100) is refused: write 100, or 0o100.
//
// A file cut short never applies as a smaller rule set. Refused, naming the
// line: an empty file, one of comments only, or a bare "rules:" or "rules:
// null" (a file with no rules says so with "rules: []", in JSON {"rules":
// []}); a YAML file whose last line has no line break and ends in the
// middle of a plain value or comment ("limit: 1" cut from "limit: 100"; a
// JSON file cannot end early and parse); a key with no value ("window:";
// null, written out, leaves the field zero); a flow, concurrency or
// hotspot rule without limit, or with a null one, as a template renders a
// missing value ("limit: 0", written out, blocks every request). A YAML file cut exactly at a line break after a complete rule
// is a valid shorter file that no check can tell apart: write rules files
// by rename (see "Partial writes").
//
// A file holds at most 100,000 rules, and at most 16 MiB in JSON or 512 KiB
// in YAML; a larger file is refused after reading one byte over its limit,
// without being parsed, and a JSON file's rules are counted as it is read.
// Parsing YAML builds the node tree of the whole file, up to about 190
// times its size: a YAML file allocates at most 128 MiB to parse, whatever
// it holds (measured: 62 MB at most, 93 MiB before problems were capped
// at 1,000), and one of 15 MB is refused after allocating 0.5 MB (go test
// -run 'YAMLMemoryBound|LoadTooManyRules' -v ./core/rulesfile). A rule set
// larger than 512 KiB goes in a JSON file.
//
// A JSON file is read one rule at a time, keeping the lines of its fields,
// not its tree; values no rule field takes (lists, mappings, unknown
// fields) are checked and skipped. So a JSON file allocates at most 512
// MiB to parse, 32 times the size limit, whatever it holds (measured: 380
// MB at most, for 100,000 flow rules setting every field; a list of
// digits inside a rule, 164 times its size before, now 8 times), and a
// valid one about 30 times its size: 100,000 rules (9.2 MB) allocate 278
// MB, where the whole tree took 447 MB (go test -run
// 'JSONMemoryBound|JSONLargeRuleSet' -v ./core/rulesfile). For that, a
// JSON rule has at most 256 keys and its overrides at most 100,000 values
// (as many as a YAML file holds), the top-level mapping at most 64 keys;
// more is a problem naming the line. A file, as core.NormalizeRules,
// reports at most 1,000 problems, then says there are more: 100,000 rules
// each wrong in ten fields allocate 322 MB to check, where keeping a
// million problems took about 1 GB (go test -run TestProblemsBounded
// ./core).
//
// A core.Rule marshals to the rules file's form: json.Marshal and
// yaml.Marshal (go.yaml.in/yaml/v3) write each field under its name here,
// durations as Go durations, and leave out zero fields but resource, kind
// and the limit of a flow, concurrency or hotspot rule. So {"rules": rules}
// marshalled from Go values is a file Parse and Load read back as the same
// rules. Rules decodes a rules list inside a configuration file of your
// own (a bare core.Rule refuses to be decoded, so that a misspelt field is
// never read as a zero), JSON within a JSON file's bounds: a 16 MiB
// configuration allocates at most 512 MiB to decode (measured: 331 MB at
// most; 2.7 GB before; go test -run RulesUnmarshalJSONMemoryBound -v
// ./core/rulesfile).
//
// # Editors and CI
//
// Schema, also in the repository as core/rulesfile/rules.schema.json, is a
// JSON Schema of the file. With the YAML language server (VS Code's YAML
// extension, Neovim, IntelliJ), a first line
//
//	# yaml-language-server: $schema=https://raw.githubusercontent.com/sluicekit/sluice/main/core/rulesfile/rules.schema.json
//
// gives completion and checks; sluicecheck -schema writes a local copy.
// For JSON files, map the schema in the editor's settings: a "$schema" key
// would be an unknown field. The loader is the authority: the schema does
// not catch duplicate names, cross-field bounds or files cut short, and
// refuses null for fields with a type, which the loader takes as zero.
//
// The sluicecheck command loads each file as a Guard does, for CI:
//
//	$ go run github.com/sluicekit/sluice/core/cmd/sluicecheck@latest rules.yaml
//	rules.yaml: 3 rules: 1 flow, 1 concurrency, 1 hotspot
//
// # Reloading
//
// A Watcher (NewWatcher, Run, Reload, OnReload) replaces the rules with
// each new version of the file by core.Guard.SetRules: rules that keep
// their name, kind, resource and param keep their state. A version that
// is invalid or unreadable (a syntax error, an unknown field, a value out
// of range, a deleted or empty file, a file cut short) is not applied and
// the rules in force stay, until the file is fixed or recreated; only
// "rules: []" removes every rule.
//
// No input makes Load, Parse, NewGuard, Rules or a Watcher panic, YAML or
// JSON (FuzzParse, run by .ci/fuzz; its corpus keeps every crasher found).
// A YAML syntax error gives the line and column where the parser met it
// ("line 4: yaml: did not find expected '-' indicator, at column 4").
//
// # Why the Watcher polls
//
// The Watcher polls (every second by default, WithPollInterval) rather than
// subscribing to file system events, which the standard library has no
// portable interface to: polling works on every file system, network ones
// and container volumes included, where a file is often replaced through a
// renamed directory or symlink that event watches miss (each poll follows
// the path afresh). A poll costs a stat of the file; the file is read, and
// its content hashed (SHA-256), only when its identity, size or
// modification time changed, or when it was modified within 2 seconds of
// the last read (modification times are coarse). So an in-place rewrite
// that keeps the size and sets the modification time back (cp -p, touch
// -r) goes unnoticed until the time changes again.
//
// # Partial writes
//
// A version applies only once two consecutive polls saw the same content;
// likewise, a problem is reported only once two consecutive polls saw it.
// A writer that truncates the file and writes it in place, os.WriteFile
// say, can be caught halfway by a poll; waiting for the content to hold
// still for a poll period keeps the files cut short that Parse cannot
// tell apart (see Errors) from ever applying. A change therefore applies one to
// two poll periods after it is written. A file that changed at each of 10
// polls in a row is reported as a problem is, once, until a version holds
// still. Writers that take longer than a
// poll period to write the file should write a temporary file in the same
// directory and rename it over the rules file, which replaces it at once.
//
// # Logging
//
// The Watcher logs what it does with log/slog, to WithLogger's logger, or
// slog.Default() when none is given: a watcher runs unattended, and a rules
// file that is silently ignored is a limit nobody knows is not in force.
// Each rule set applied is logged at level Info (the number of rules, the
// names of the rules added, removed and changed, at most 10 of each), each
// problem at level Warn, once per distinct content or error; so the log
// gets at most one line per poll, and only when the file changes.
package rulesfile
