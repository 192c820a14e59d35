module github.com/sluicekit/sluice/core/store/redisstore/internal/peerbench

go 1.26.0

replace (
	github.com/sluicekit/sluice => ../../../../..
	github.com/sluicekit/sluice/core/internal/peerbench => ../../../../internal/peerbench
	github.com/sluicekit/sluice/core/store/redisstore => ../..
)

require (
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/sluicekit/sluice v0.1.0
	github.com/sluicekit/sluice/core/internal/peerbench v0.1.0
	github.com/sluicekit/sluice/core/store/redisstore v0.1.0
)

require (
	github.com/alicebob/miniredis/v2 v2.40.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
