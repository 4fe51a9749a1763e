// Package acptest provides a scripted fake ACP agent for tests of hosts and
// relays, in the spirit of net/http/httptest. It is for fault injection
// (crashes, non-JSON output, huge lines, odd ids); the real peers
// (github.com/coder/acp-go-sdk's example agent, the TypeScript SDK's
// example, real agents) prove the relay against code nobody here wrote.
package acptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// EnvScript names the environment variable that turns a test binary into
// the fake agent: its value is the agent script text, or "@" and the path of
// a file holding it (for scripts over the environment's size limit). See
// MaybeRunAgent.
const EnvScript = "ACPTEST_AGENT_SCRIPT"

// EnvLog names the environment variable with a file path where the fake
// agent appends every line it reads from stdin.
const EnvLog = "ACPTEST_AGENT_LOG"

// MaybeRunAgent runs the fake agent and exits the process when EnvScript is
// set; otherwise it returns at once. Call it first in TestMain so that the
// test binary can be the agent subprocess (os.Args[0]).
func MaybeRunAgent() {
	script, ok := os.LookupEnv(EnvScript)
	if !ok {
		return
	}
	if path, isFile := strings.CutPrefix(script, "@"); isFile {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "acptest:", err)
			os.Exit(98)
		}
		script = string(b)
	}
	var log io.Writer = io.Discard
	if p := os.Getenv(EnvLog); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "acptest:", err)
			os.Exit(98)
		}
		defer f.Close()
		log = f
	}
	os.Exit(RunAgent(script, os.Stdin, os.Stdout, os.Stderr, log))
}

// RunAgent runs script against in and out and returns the exit status.
// Every line read from in is copied to log. Directives, one per line:
//
//	recv [METHOD]   read one message; with METHOD, fail (status 99) unless it
//	                has that method; the raw id of a request becomes $ID
//	send JSON       write JSON as one line, after replacing $ID and $METHOD
//	                with the id and method of the last request received
//	raw TEXT        write TEXT as one line (non-JSON output)
//	big N           write a session/update agent_message_chunk of N text bytes
//	stderr TEXT     write TEXT to stderr
//	sleep DURATION  pause (time.ParseDuration)
//	waiteof         read and log lines until stdin closes
//	exit CODE       exit with CODE at once
//	closestdout     close stdout (the agent lives on)
//	spawn ARGS      start ARGS as a child that inherits stdout and is not
//	                waited for (a descendant holding the pipe open)
//	runif OPTIONID ARGV
//	                as a real agent would after a permission request: when
//	                the last message received was a response whose result
//	                is outcome "selected" with OPTIONID, run ARGV (a JSON
//	                array of strings) and wait for it, its output going to
//	                stderr; otherwise do nothing
//
// Empty lines and lines starting with "#" are ignored. At the end of the
// script the agent exits 0.
func RunAgent(script string, in io.Reader, out, errw io.Writer, log io.Writer) int {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriter(out)
	var lastID json.RawMessage
	var lastMethod string
	var lastMsg []byte
	for n, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(line, " ")
		fail := func(format string, a ...any) int {
			fmt.Fprintf(errw, "acptest agent: script line %d %q: %s\n", n+1, line, fmt.Sprintf(format, a...))
			return 99
		}
		switch verb {
		case "recv":
			msg, err := readLine(r, log)
			if err != nil {
				return fail("read: %v", err)
			}
			var env struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(msg, &env); err != nil {
				return fail("not JSON: %q", msg)
			}
			if arg != "" && env.Method != arg {
				return fail("got method %q, want %q", env.Method, arg)
			}
			if env.Method != "" {
				lastID, lastMethod = env.ID, env.Method
			}
			lastMsg = msg
		case "send":
			arg = strings.ReplaceAll(arg, "$ID", string(lastID))
			w.WriteString(strings.ReplaceAll(arg, "$METHOD", lastMethod) + "\n")
		case "raw":
			w.WriteString(arg + "\n")
		case "big":
			size, err := strconv.Atoi(arg)
			if err != nil {
				return fail("%v", err)
			}
			w.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
			w.Write(bytes.Repeat([]byte("x"), size))
			w.WriteString("\"}}}}\n")
		case "stderr":
			fmt.Fprintln(errw, arg)
		case "sleep":
			d, err := time.ParseDuration(arg)
			if err != nil {
				return fail("%v", err)
			}
			w.Flush()
			time.Sleep(d)
		case "waiteof":
			w.Flush()
			for {
				if _, err := readLine(r, log); err != nil {
					break
				}
			}
		case "closestdout":
			w.Flush()
			if f, ok := out.(*os.File); ok {
				f.Close()
			}
		case "spawn":
			args := strings.Fields(arg)
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Stdout = out
			if err := cmd.Start(); err != nil {
				return fail("%v", err)
			}
		case "runif":
			opt, argvJSON, _ := strings.Cut(arg, " ")
			var argv []string
			if err := json.Unmarshal([]byte(argvJSON), &argv); err != nil || len(argv) == 0 {
				return fail("want OPTIONID and a JSON array of strings: %v", err)
			}
			if selectedOption(lastMsg) != opt {
				continue
			}
			w.Flush()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = errw, errw
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(errw, "acptest agent: %v: %v\n", argv, err)
			}
		case "exit":
			code, _ := strconv.Atoi(arg)
			w.Flush()
			return code
		default:
			return fail("unknown directive")
		}
		if verb != "recv" {
			if err := w.Flush(); err != nil {
				return fail("write: %v", err)
			}
		}
	}
	w.Flush()
	return 0
}

// selectedOption returns the optionId of a response msg whose result is a
// session/request_permission outcome "selected", or "".
func selectedOption(msg []byte) string {
	var r struct {
		Method string `json:"method"`
		Result struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &r) != nil || r.Method != "" || r.Result.Outcome.Outcome != "selected" {
		return ""
	}
	return r.Result.Outcome.OptionID
}

func readLine(r *bufio.Reader, log io.Writer) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	if len(line) > 0 {
		log.Write(line)
	}
	if err != nil && len(line) == 0 {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}
