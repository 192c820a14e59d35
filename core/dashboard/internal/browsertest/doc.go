// Package browsertest holds the dashboard's browser test: headless
// Chromium, driven through github.com/chromedp/chromedp, reads the numbers
// the page shows under real HTTP traffic. It is a module of its own so that
// the root module does not require chromedp.
//
// The test skips when no Chromium is on PATH, and fails instead with
// SLUICE_REQUIRE_BROWSER=1 (as .ci/run sets it):
//
//	cd core/dashboard/internal/browsertest && go test ./...
package browsertest
