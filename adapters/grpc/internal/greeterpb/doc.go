// Package greeterpb is the generated protobuf and gRPC code of the Greeter
// service the adapter's tests serve (greeter.proto). The generated files are
// committed so that testing needs no protoc; regenerate them with go
// generate after editing greeter.proto (needs protoc, protoc-gen-go and
// protoc-gen-go-grpc on PATH).
package greeterpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative greeter.proto
