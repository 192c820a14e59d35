package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// BeforeCommand returns a client hook that calls f with the context of
// every command and pipeline before it is sent, for tests that watch or
// delay what a Store sends.
func BeforeCommand(f func(ctx context.Context)) redis.Hook { return beforeCommand(f) }

type beforeCommand func(ctx context.Context)

func (f beforeCommand) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f beforeCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f(ctx)
		return next(ctx, cmd)
	}
}

func (f beforeCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		f(ctx)
		return next(ctx, cmds)
	}
}
