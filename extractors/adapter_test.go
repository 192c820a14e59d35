package extractors_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// TestForAdapter checks which Extractor an adapter reads params with, for
// each way of declaring one: to the Guard, to the adapter, to both, to
// neither, and the refusals.
func TestForAdapter(t *testing.T) {
	newExtractor := func() *extractors.Extractor {
		x, err := extractors.New()
		require.NoError(t, err)
		return x
	}
	x, y := newExtractor(), newExtractor()
	guard := func(sources ...core.ParamSource) *core.Guard {
		var opts []core.Option
		for _, s := range sources {
			opts = append(opts, core.WithParamSource(s))
		}
		g, err := core.New(opts...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		return g
	}
	const other = "WithExtractor: the Guard was given another Extractor (core.WithParamSource), and the adapter would read params otherwise: give the Extractor once, to the Guard, or give the Guard this one too"
	for _, tc := range []struct {
		name    string
		guard   *core.Guard
		own     *extractors.Extractor
		want    *extractors.Extractor // nil: a new default one
		wantErr string
	}{
		{name: "declared to the Guard", guard: guard(x), want: x},
		{name: "declared to the Guard twice", guard: guard(x, core.CustomParams("tenant"), x), want: x},
		{name: "declared to the adapter", guard: guard(), own: y, want: y},
		{name: "declared to both", guard: guard(x), own: x, want: x},
		{name: "one of the Guard's", guard: guard(x, y), own: y, want: y},
		{name: "declared to neither", guard: guard(core.CustomParams("tenant"))},
		{name: "views are not declarations", guard: guard(x.HTTPSource(), x.GRPCSource())},
		{name: "another", guard: guard(x), own: y, wantErr: other},
		{name: "none of the Guard's", guard: guard(x, y), own: newExtractor(), wantErr: other},
		{name: "which one", guard: guard(x, y), wantErr: "the Guard was given 2 Extractors (core.WithParamSource): give the adapter the one it reads params with (WithExtractor)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := extractors.ForAdapter(tc.guard, tc.own)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got)
			if tc.want != nil {
				assert.Same(t, tc.want, got)
			} else {
				assert.NotSame(t, x, got)
				assert.NotSame(t, y, got)
			}
		})
	}
}
