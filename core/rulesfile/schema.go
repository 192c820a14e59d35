package rulesfile

import _ "embed" // for Schema

// Schema is the JSON Schema (draft 2020-12) of a rules file, the file
// rules.schema.json of this package, for editors (see the package
// documentation, Editors and CI). It is generated from the kinds'
// descriptors in package core: go test ./core -run TestRulesSchema -update.
//
//go:embed rules.schema.json
var Schema string
