package doctext

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestProse(t *testing.T) {
	require.Equal(t, "a window (default 1s) with six algorithms: leap-array",
		Prose("// a window (default\n//\t1s) with   six\n// algorithms:\n\tleap-array\n"))
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1s", 100 * time.Millisecond: "100ms", 5 * time.Minute: "5m",
		90 * time.Second: "1m30s", time.Hour: "1h", 90 * time.Minute: "1h30m",
	} {
		require.Equal(t, want, Duration(d), "%v", d)
	}
}

func TestStated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.go")
	require.NoError(t, os.WriteFile(path, []byte("// Window (default\n// 1s); Buckets (default 10), Window (default 2s)\n"), 0o600))
	require.Equal(t, []string{"1s", "2s"}, Stated(t, path, `Window \(default (\S+)\)`))
}
