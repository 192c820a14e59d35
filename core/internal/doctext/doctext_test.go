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

func TestEveryAndThousands(t *testing.T) {
	require.Equal(t, "half second", Every(500*time.Millisecond))
	require.Equal(t, "second", Every(time.Second))
	require.Equal(t, "5m", Every(5*time.Minute))
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567", -1000: "-1,000", -100: "-100"} {
		require.Equal(t, want, Thousands(n), "%d", n)
	}
}
