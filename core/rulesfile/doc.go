// Package rulesfile reads sluice rules from YAML and JSON files, with every
// problem given its line, and keeps a Guard's rules in step with a file
// while it serves.
//
// A rules file is a mapping whose one key, rules, holds a list of rules,
// each a mapping of the fields of core.Rule named as in its json tags:
//
//	rules:
//	  - resource: GET /hello
//	    kind: flow
//	    limit: 5
//	    window: 1s
//
// NewGuard starts a Guard with the rules of a file; Load and Parse return
// them, validated and normalized, for tools (the sluicecheck command) and for
// rules put together from several places. A Watcher applies each new
// version of the file to a running Guard. Schema is the file's JSON
// Schema, for editors; Rules decodes a rules list kept in another
// configuration file.
//
// Package core validates the rules (core.NormalizeRules, core.New,
// core.Guard.SetRules); this package reads the file and gives each problem
// core finds the line of its rule and field. A rule of a file on its way to a
// Guard (NewGuard, Watcher) is validated once, by core.
//
// No input makes Load, Parse, NewGuard, Rules or a Watcher panic, YAML or
// JSON (FuzzParse, run by .ci/fuzz; its corpus keeps every crasher found).
// A YAML syntax error gives the line and column where the parser met it
// ("line 4: yaml: did not find expected '-' indicator, at column 4").
//
// # Why the Watcher polls
//
// The Watcher polls (every second by default, WithPollInterval) rather than
// subscribing to file system events: the standard library has no portable
// interface to them, and polling works on every system and file system,
// network file systems and container volumes included, where a file is
// often replaced through a renamed directory or symlink that event watches
// on the file itself miss (each poll follows the path, symlinks included,
// afresh). A poll costs a stat of the file; the file is read, and its
// content hashed (SHA-256), only when its identity, size or modification
// time changed, or when it was modified within 2 seconds of the last read
// (file systems record modification times coarsely, so two writes in quick
// succession can leave both unchanged). So an in-place rewrite that keeps
// the size and sets the modification time back to an old value (cp -p or
// touch -r onto the file) goes unnoticed until the time changes again.
//
// # Partial writes
//
// A version applies only once two consecutive polls saw the same content;
// likewise, a problem is reported only once two consecutive polls saw it.
// A writer that truncates the file and writes it in place, os.WriteFile
// say, can be caught halfway by a poll. Parse refuses most files cut short
// (empty, or ending in the middle of a line, a key or before a limit), but
// a YAML file cut at a line break after a complete rule is a valid file
// with fewer rules; waiting for the content to hold still for a poll
// period keeps those from ever applying. A change therefore applies one to
// two poll periods after it is written. Writers that take longer than a
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
// gets at most one line per poll, and only when the file changes. Pass
// slog.New(slog.DiscardHandler) to silence it.
package rulesfile
