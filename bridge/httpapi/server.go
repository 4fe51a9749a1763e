package httpapi

import (
	"log/slog"
	"net/http"
	"time"
)

// Timeouts of the server NewServer returns (docs/security.md, "Limits").
const (
	// ReadHeaderTimeout bounds the time from a connection's first byte (or
	// the end of its previous request) to the end of the request headers.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds the time to read a whole request, headers and
	// body. A WebSocket connection has no deadline once upgraded.
	ReadTimeout = 20 * time.Second
	// IdleTimeout closes a keep-alive connection that sends no new request.
	IdleTimeout = 2 * time.Minute
	// MaxHeaderBytes caps the request line and headers.
	MaxHeaderBytes = 64 << 10
)

// NewServer returns the http.Server for h (the handler of [New]) with the
// timeouts above, errors logged to log at level Warn, and the ConnContext
// and ConnState through which the guard and the server tell a
// [LimitListener] which connections carry the token and which are idle.
// Serve it on a LimitListener.
func NewServer(h http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.Default()
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnContext:       connContext,
		ConnState:         connState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
