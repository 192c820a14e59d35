// Command grpc is the README's gRPC program (cd examples/hello && go run ./grpc):
// a server whose calls are limited by a rule given as a Go value. The health
// service stands in for yours; reflection lets grpcurl call it.
package main

import (
	"cmp"
	"log"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
)

func main() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "per-user", Resource: "/grpc.health.v1.Health/*", Kind: core.KindHotspot,
		Param: "metadata:x-user-id", Limit: 3, // per user, per second
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard)),
		grpc.ChainStreamInterceptor(sluicegrpc.StreamServerInterceptor(guard)))
	healthpb.RegisterHealthServer(s, health.NewServer()) // your services here
	reflection.Register(s)
	l, err := net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:50051"))
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(s.Serve(l))
}
