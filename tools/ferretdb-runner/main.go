// Command ferretdb-runner starts an embedded FerretDB (MongoDB wire protocol over SQLite)
// on a free loopback port and prints its MongoDB URI as the first line of stdout.
//
// It exists for Cairn's test harness: no real mongod can be had on the CI machines, and the
// published `cmd/ferretdb` of FerretDB v1.24.2 panics at start (FerretDB#2982), while the
// embeddable package works.
//
// Usage:
//
//	ferretdb-runner -dir /tmp/data [-listen 127.0.0.1:0] [-log-level warn] [-exit-on-stdin-eof]
//
// It runs until SIGTERM or SIGINT (or, with -exit-on-stdin-eof, until its stdin is closed, so
// that it dies with a parent that held the other end of a pipe), then shuts down and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	os.Exit(run())
}

func run() int {
	dir := flag.String("dir", "", "data directory for the SQLite databases (required; created if missing)")
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on; port 0 picks a free port")
	logLevel := flag.String("log-level", "warn", "log level on stderr: debug, info, warn or error")
	stdinEOF := flag.Bool("exit-on-stdin-eof", false, "shut down when stdin reaches EOF (parent died or closed the pipe)")
	flag.Parse()

	if *dir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb-runner: -dir is required")
		flag.Usage()
		return 2
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-runner: bad -log-level %q: %v\n", *logLevel, err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	absDir, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-runner: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-runner: create data dir: %v\n", err)
		return 1
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + absDir + "/",
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-runner: %v\n", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if *stdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	// MongoDBURI blocks until Run has set up its listener; make sure Run has not already failed
	// (a port in use, a bad data dir) by racing it against the URI.
	uriCh := make(chan string, 1)
	go func() { uriCh <- f.MongoDBURI() }()

	select {
	case uri := <-uriCh:
		fmt.Println(uri)
	case err := <-done:
		fmt.Fprintf(os.Stderr, "ferretdb-runner: FerretDB stopped before listening: %v\n", err)
		return 1
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "ferretdb-runner: FerretDB did not start listening within 30s")
		return 1
	case <-ctx.Done():
		return 0
	}

	err = <-done
	if err != nil && !errors.Is(err, context.Canceled) && !isClosedErr(err) {
		fmt.Fprintf(os.Stderr, "ferretdb-runner: %v\n", err)
		return 1
	}
	return 0
}

func isClosedErr(err error) bool {
	return errors.Is(err, net.ErrClosed)
}
