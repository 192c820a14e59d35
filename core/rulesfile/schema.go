package rulesfile

import _ "embed" // for Schema

// Schema is the JSON Schema (draft 2020-12) of a rules file, the file
// rules.schema.json of this package: editors that read JSON Schemas (the
// YAML language server's "# yaml-language-server: $schema=..." modeline,
// "$schema" in JSON) use it to complete and check rules files as they are
// written. Parse is the authority: the schema accepts some files it
// refuses (a duplicate name, a value over a bound that depends on other
// fields, a file cut short), and refuses null for fields with a type,
// which Parse takes as zero. It is generated from the kinds' descriptors
// in package core: go test ./core -run TestRulesSchema -update.
//
//go:embed rules.schema.json
var Schema string
