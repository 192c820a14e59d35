package sluicegrpc_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
)

// greeter serves the Greeter service of greeter.proto; greeterpb, its
// generated code, stands for your service's.
type greeter struct {
	greeterpb.UnimplementedGreeterServer
}

func (greeter) SayHello(_ context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	return &greeterpb.HelloReply{Message: "Hello, " + req.GetName()}, nil
}

// A server whose SayHello passes one call per hour: the second call fails
// with ResourceExhausted, a RetryInfo detail and the pushback trailer.
func Example() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "hello-rate", Resource: "/sluice.examples.Greeter/SayHello",
		Kind: core.KindFlow, Algorithm: "token-bucket", Limit: 1, Window: time.Hour,
	}))
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard)))
	greeterpb.RegisterGreeterServer(srv, greeter{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := greeterpb.NewGreeterClient(conn)
	for range 2 {
		var trailer metadata.MD
		reply, err := client.SayHello(context.Background(), &greeterpb.HelloRequest{Name: "alice"}, grpc.Trailer(&trailer))
		if err != nil {
			st := status.Convert(err)
			for _, d := range st.Details() {
				if retry, ok := d.(*errdetails.RetryInfo); ok {
					fmt.Println(st.Code(), "retry after", retry.GetRetryDelay().AsDuration().Round(time.Minute))
				}
			}
			pushback := trailer.Get("grpc-retry-pushback-ms")
			fmt.Println("pushback set:", len(pushback) == 1)
			continue
		}
		fmt.Println(reply.GetMessage())
	}
	// Output:
	// Hello, alice
	// ResourceExhausted retry after 1h0m0s
	// pushback set: true
}

// A client that limits its own outgoing calls: a blocked call fails locally,
// without reaching the server (here there is none).
func ExampleUnaryClientInterceptor() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "no-calls", Resource: "/sluice.examples.Greeter/*", Kind: core.KindConcurrency, Limit: 0,
	}))
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient("127.0.0.1:1",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(guard)),
		grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(guard)),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	_, err = greeterpb.NewGreeterClient(conn).SayHello(context.Background(), &greeterpb.HelloRequest{Name: "alice"})
	fmt.Println(status.Code(err))
	// Output:
	// ResourceExhausted
}

// Health checks and reflection pass without entering the Guard.
func ExampleWithSkipper() {
	guard, err := core.New(core.WithRules(core.Rule{Resource: "*", Kind: core.KindConcurrency, Limit: 100}))
	if err != nil {
		log.Fatal(err)
	}
	skip := sluicegrpc.WithSkipper(func(_ context.Context, fullMethod string) bool {
		return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
			strings.HasPrefix(fullMethod, "/grpc.reflection.")
	})
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard, skip)),
		grpc.ChainStreamInterceptor(sluicegrpc.StreamServerInterceptor(guard, skip)),
	)
	defer srv.Stop()
}

// The status of a blocked call, and a block handler that builds on it.
func ExampleBlockedStatus() {
	b := &core.BlockedError{Resource: "/pkg.Svc/Get", Rule: "get-rate", Kind: core.KindFlow,
		Limit: 10, Window: time.Second, RetryAfter: 250 * time.Millisecond}
	st := sluicegrpc.BlockedStatus(b)
	fmt.Println(st.Code())
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			fmt.Println("RetryInfo", d.GetRetryDelay().AsDuration())
		case *errdetails.ErrorInfo:
			fmt.Println("ErrorInfo", d.GetReason(), d.GetMetadata()["rule"])
		case *errdetails.QuotaFailure:
			fmt.Println("QuotaFailure", d.GetViolations()[0].GetSubject())
		}
	}

	// A block handler may reword the message and keep the details.
	_ = sluicegrpc.WithBlockHandler(func(_ context.Context, _ string, b *core.BlockedError) error {
		p := sluicegrpc.BlockedStatus(b).Proto()
		p.Message = "slow down"
		return status.FromProto(p).Err()
	})
	// Output:
	// ResourceExhausted
	// RetryInfo 250ms
	// ErrorInfo RATE_LIMITED get-rate
	// QuotaFailure rule:get-rate
}

// A call that takes one permit per letter of its name: the rule passes 10
// letters an hour, however they are split into calls.
func ExampleWithCost() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "letters", Resource: "/sluice.examples.Greeter/SayHello", Kind: core.KindFlow, Limit: 10, Window: time.Hour,
	}))
	if err != nil {
		log.Fatal(err)
	}
	letters := sluicegrpc.WithCost(func(_ context.Context, _ string, req any) int64 {
		if r, ok := req.(*greeterpb.HelloRequest); ok {
			return int64(len(r.GetName()))
		}
		return 1 // a stream: no request message yet
	})
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard, letters)))
	greeterpb.RegisterGreeterServer(srv, greeter{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client := greeterpb.NewGreeterClient(conn)
	for _, name := range []string{"Eleanor", "Bobby", "Al"} {
		_, err := client.SayHello(context.Background(), &greeterpb.HelloRequest{Name: name})
		fmt.Println(name, status.Code(err))
	}
	// Output:
	// Eleanor OK
	// Bobby ResourceExhausted
	// Al OK
}
