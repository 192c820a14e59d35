package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUsageErrorsSayWhatIsWrong: each usage error exits with status 2 and
// says, before the usage, what was wrong and what is allowed: no file
// given, a file given with -schema, and an empty name in -stores or
// -params (a stray comma), which used to refuse every store or param of
// a valid file, naming the empty names as those given.
func TestUsageErrorsSayWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "sluicecheck: no rules file given\n"},
		{[]string{"-schema", "rules.yaml"}, "sluicecheck: -schema prints the schema and takes no rules file, got rules.yaml\n"},
		{[]string{"-stores", ",,", "rules.yaml"}, `sluicecheck: -stores: empty name in ",,"; give names separated by commas` + "\n"},
		{[]string{"rules.yaml", "-params", "user,,tenant"}, `sluicecheck: -params: empty name in "user,,tenant"; give names separated by commas` + "\n"},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, run(c.args, &stdout, &stderr), "%q", c.args)
		assert.Empty(t, stdout.String(), "%q", c.args)
		first, _, _ := bytes.Cut(stderr.Bytes(), []byte("usage:"))
		assert.Equal(t, c.want, string(first), "%q", c.args)
	}
}
