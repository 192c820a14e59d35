module github.com/sluicekit/sluice/adapters/grpc/internal/peerbench

go 1.26.0

replace (
	github.com/sluicekit/sluice => ../../../..
	github.com/sluicekit/sluice/adapters/grpc => ../..
	github.com/sluicekit/sluice/examples/grpc/greeterpb => ../../../../examples/grpc/greeterpb
)

require (
	github.com/grpc-ecosystem/go-grpc-middleware/v2 v2.3.4
	github.com/sluicekit/sluice v0.1.0
	github.com/sluicekit/sluice/adapters/grpc v0.1.0
	golang.org/x/time v0.16.0
	google.golang.org/grpc v1.85.0
)

require (
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
