package temporaldev

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// serverLogger passes the Temporal server's errors to an slog.Logger and
// drops everything below: the server logs a great deal at Info and Warn
// that says nothing to someone running Baton.
//
// Fatal and Panic panic with a *fatalError instead of exiting the process;
// Start turns one raised while the server starts into an error.
type serverLogger struct {
	out   *slog.Logger // nil: drop everything
	quiet *atomic.Bool // set while stopping: the services then report every cancelled call as an error
	attrs []any
}

func newServerLogger(out *slog.Logger) *serverLogger {
	return &serverLogger{out: out, quiet: new(atomic.Bool)}
}

var (
	_ log.Logger     = (*serverLogger)(nil)
	_ log.WithLogger = (*serverLogger)(nil)
)

// fatalError is what serverLogger panics with on Fatal and Panic.
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return "temporal server: " + e.msg }

func (l *serverLogger) Debug(string, ...tag.Tag) {}
func (l *serverLogger) Info(string, ...tag.Tag)  {}
func (l *serverLogger) Warn(string, ...tag.Tag)  {}

func (l *serverLogger) Error(msg string, tags ...tag.Tag)  { l.log(msg, tags) }
func (l *serverLogger) DPanic(msg string, tags ...tag.Tag) { l.log(msg, tags) }

func (l *serverLogger) Panic(msg string, tags ...tag.Tag) {
	l.log(msg, tags)
	panic(&fatalError{msg: describe(msg, tags)})
}

func (l *serverLogger) Fatal(msg string, tags ...tag.Tag) {
	l.log(msg, tags)
	panic(&fatalError{msg: describe(msg, tags)})
}

func (l *serverLogger) With(tags ...tag.Tag) log.Logger {
	return &serverLogger{out: l.out, quiet: l.quiet, attrs: append(l.attrs[:len(l.attrs):len(l.attrs)], tagAttrs(tags)...)}
}

func (l *serverLogger) log(msg string, tags []tag.Tag) {
	if l.out == nil || l.quiet.Load() || !l.out.Enabled(context.Background(), slog.LevelError) {
		return
	}
	args := append(l.attrs[:len(l.attrs):len(l.attrs)], tagAttrs(tags)...)
	l.out.Error("temporal server: "+msg, args...)
}

func tagAttrs(tags []tag.Tag) []any {
	attrs := make([]any, 0, len(tags))
	for _, t := range tags {
		attrs = append(attrs, slog.Any(t.Key(), t.Value()))
	}
	return attrs
}

// describe renders a message with its tags for an error.
func describe(msg string, tags []tag.Tag) string {
	for _, t := range tags {
		msg += fmt.Sprintf(" %s=%v", t.Key(), t.Value())
	}
	return msg
}
