module github.com/sluicekit/sluice/core/internal/peerbench

go 1.26.0

require (
	github.com/sethvargo/go-limiter v0.7.1
	github.com/sluicekit/sluice v0.1.0
	go.uber.org/ratelimit v0.3.1
	golang.org/x/time v0.16.0
)

require github.com/benbjohnson/clock v1.3.0 // indirect

replace github.com/sluicekit/sluice => ../../..
