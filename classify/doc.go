// Package classify decides whether a shell command is read-only, a
// write, or unknown, from its text alone.
//
// Command parses the text with mvdan.cc/sh/v3/syntax in the Bash dialect
// (never by splitting strings) and walks every statement, pipeline,
// compound command, substitution, redirection and nested script. Each
// simple command is looked up in tables of programs with their options
// and operands; the classes combine as write > unknown > read-only
// (Class.Max). A Verdict carries the class, the words and operators that
// decided it, with byte offsets into the input, and the static program
// names.
//
// The security invariant is absolute: nothing that can change files,
// processes, repository state or network-visible state, or run arbitrary
// code, is ever ReadOnly. So a parse failure, a node type the walker does
// not know, an expansion that hides a program name or a flag, an option
// missing from a program's table, and an unknown program are all
// Unknown; a known write stays Write through wrappers (sh -c, eval, env,
// timeout, nice, nohup, command, builtin, exec, time, sudo, xargs, find
// -exec, trap, git aliases) and through redirections to anything but
// /dev/null or a file descriptor.
//
// The design is tri-state plan-mode routing (read-only runs, write is
// blocked, unknown needs an exact one-off approval; docs/plan-mode.md);
// the corpus in testdata/classify holds the seed examples and a row for
// every known bypass class. docs/classify.md describes the rules per
// program and how to extend the tables.
//
// The package is pure: no I/O, no global state beyond read-only tables
// and a pool of parsers, and Command is safe for concurrent use.
package classify
