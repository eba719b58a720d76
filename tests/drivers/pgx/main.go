// Closed-loop load through Go pgx v5 with its DEFAULT statement caching, for lockscope's driver tests.
//
// What pgx v5 sends by default (ConnConfig.DefaultQueryExecMode = QueryExecModeCacheStatement, statement cache
// of 512 per connection): the first Query of a SQL text on a connection prepares it as a NAMED server-side
// statement ("stmtcache_<sha256 prefix>": Parse + Describe + Sync), every execution, the first included, is
// Bind + Execute of that statement (extended protocol, binary parameters typed by the Describe). So the server
// sees one prepared statement per connection, reused for every call: custom plans for executions 1-5, a generic
// plan from the 6th on (plancache.c choose_custom_plan, plan_cache_mode = auto).
//
// Usage: pgx-load HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]
//
//	HOST is a Unix socket directory or an address; no password. SQL uses $1..$n (pgx's own syntax).
//	TYPE is int (an int64) or text (a string). The loop runs SECONDS, or less if standard input ends first
//	(its end-of-file stops the load). Prints one JSON line: {"driver","version","calls","errors","seconds"}.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pgx-load: "+format+"\n", args...)
	os.Exit(2)
}

func pgxVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/jackc/pgx/v5" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func parseParam(p string) any {
	kind, value, ok := strings.Cut(p, ":")
	switch {
	case ok && kind == "int":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			fail("bad int parameter %q", p)
		}
		return n
	case ok && kind == "text":
		return value
	}
	fail("parameter %q is not int:N or text:S", p)
	return nil
}

func main() {
	if len(os.Args) < 8 {
		fail("usage: pgx-load HOST PORT USER DBNAME CLIENTS SECONDS SQL [TYPE:VALUE ...]")
	}
	host, port, user, dbname := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	clients, err := strconv.Atoi(os.Args[5])
	if err != nil || clients < 1 {
		fail("bad client count %q", os.Args[5])
	}
	seconds, err := strconv.ParseFloat(os.Args[6], 64)
	if err != nil || seconds <= 0 {
		fail("bad duration %q", os.Args[6])
	}
	sql := os.Args[7]
	var args []any
	for _, p := range os.Args[8:] {
		args = append(args, parseParam(p))
	}

	ctx := context.Background()
	connString := fmt.Sprintf("host=%s port=%s user=%s dbname=%s", host, port, user, dbname)
	conns := make([]*pgx.Conn, clients)
	for i := range conns {
		conn, err := pgx.Connect(ctx, connString)
		if err != nil {
			fail("connect: %v", err)
		}
		defer conn.Close(ctx)
		conns[i] = conn
	}

	var calls, errors atomic.Int64
	var firstError sync.Once
	var stop atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop.Store(true)
	}()
	start := time.Now()
	deadline := start.Add(time.Duration(seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Add(1)
		go func(conn *pgx.Conn) {
			defer wg.Done()
			for time.Now().Before(deadline) && !stop.Load() {
				rows, err := conn.Query(ctx, sql, args...)
				if err == nil {
					for rows.Next() {
					}
					rows.Close()
					err = rows.Err()
				}
				if err != nil {
					errors.Add(1)
					firstError.Do(func() { fmt.Fprintf(os.Stderr, "pgx-load: first error: %v\n", err) })
					continue
				}
				calls.Add(1)
			}
		}(conn)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()

	out, _ := json.Marshal(map[string]any{
		"driver": "pgx", "version": pgxVersion(), "calls": calls.Load(), "errors": errors.Load(), "seconds": elapsed,
	})
	fmt.Println(string(out))
}
