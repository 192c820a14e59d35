// Command client calls the Greeter of the sluice gRPC example (examples/grpc)
// -n times as -user (sent as x-user-id metadata) and prints, per call, OK
// with the answer, or blocked with the rule and the retry delay the server
// sent (google.rpc.ErrorInfo and RetryInfo details).
//
//	go -C examples run ./grpc/client -addr 127.0.0.1:50051 -n 10 -user alice
//	go -C examples run ./grpc/client -stream -n 3
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluicekit/sluice/examples/grpc/greeterpb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}

// run parses args, makes the calls and prints one line per call to out.
// Blocked calls are not errors; a call failing otherwise is.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", "127.0.0.1:50051", "address of the example server")
	n := fs.Int("n", 10, "number of calls")
	user := fs.String("user", "alice", "x-user-id metadata sent with every call (empty: none)")
	stream := fs.Bool("stream", false, "call Count (3 numbers, 100ms apart) instead of SayHello")
	every := fs.Duration("every", 0, "pause between calls")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := greeterpb.NewGreeterClient(conn)
	if *user != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-user-id", *user)
	}

	for i := 1; i <= *n; i++ {
		if i > 1 && *every > 0 {
			select {
			case <-time.After(*every):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		var answer string
		if *stream {
			answer, err = count(ctx, client)
		} else {
			answer, err = hello(ctx, client, *user)
		}
		switch {
		case err == nil:
			fmt.Fprintf(out, "call %d: OK %s\n", i, answer)
		case status.Code(err) == codes.ResourceExhausted:
			fmt.Fprintf(out, "call %d: blocked %s\n", i, describe(status.Convert(err)))
		default:
			return fmt.Errorf("call %d: %w", i, err)
		}
	}
	return nil
}

func hello(ctx context.Context, client greeterpb.GreeterClient, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := client.SayHello(ctx, &greeterpb.HelloRequest{Name: name})
	if err != nil {
		return "", err
	}
	return reply.GetMessage(), nil
}

func count(ctx context.Context, client greeterpb.GreeterClient) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stream, err := client.Count(ctx, &greeterpb.CountRequest{N: 3, IntervalMs: 100})
	if err != nil {
		return "", err
	}
	got := ""
	for {
		reply, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return "counted" + got, nil
		}
		if err != nil {
			return "", err
		}
		got += fmt.Sprintf(" %d", reply.GetNumber())
	}
}

// describe names the rule and the retry delay of a blocked call's status.
func describe(st *status.Status) string {
	rule, retry := "?", ""
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			rule = d.GetMetadata()["rule"]
		case *errdetails.RetryInfo:
			retry = ", retry after " + d.GetRetryDelay().AsDuration().String()
		}
	}
	return "by rule " + rule + retry
}
