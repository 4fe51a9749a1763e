package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// logger builds the log/slog logger of --log-level, --log-format and
// --log-file. Logs go to stderr, or only to --log-file (appended, created
// with mode 0600) when it is set; never to stdout, which carries ACP. The
// returned close function closes the log file (a no-op for stderr). A bad
// level or format is a usage error; a log file that cannot be opened is
// not.
func (f *runFlags) logger(stderr io.Writer) (log *slog.Logger, closeLog func() error, err error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToLower(f.logLevel))); err != nil {
		return nil, nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", f.logLevel)}
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return nil, nil, usageError{fmt.Errorf("--log-format %q: want text or json", f.logFormat)}
	}
	w, closeLog := stderr, func() error { return nil }
	if f.logFile != "" {
		lf, err := os.OpenFile(f.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closeLog = lf, lf.Close
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if f.logFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(h).With("component", "acpmux"), closeLog, nil
}

// loggerStatus is the exit status for an error from logger: 2 for a usage
// error, else 1.
func loggerStatus(err error) int {
	if _, ok := err.(usageError); ok {
		return 2
	}
	return 1
}
