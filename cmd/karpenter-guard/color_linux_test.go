//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal and returns its two ends: what the program writes to tty is
// read from master. Tests write through a real terminal because that is what turns colours on.
func openTerminal(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal end: %v", err)
	}
	return master, tty
}

// onTerminal runs the CLI with its standard output on a terminal and returns what the terminal
// showed.
func onTerminal(t *testing.T, args ...string) string {
	t.Helper()
	master, tty := openTerminal(t)
	var stderr bytes.Buffer
	done := make(chan []byte)
	go func() {
		// Once the terminal end is closed and drained, reading the master fails with EIO: the end.
		b, _ := io.ReadAll(master)
		done <- b
	}()
	run(args, strings.NewReader(""), tty, &stderr)
	tty.Close()
	out := <-done
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return string(out)
}

// TestColourOnlyOnATerminalUnlessTurnedOff: text output is coloured on a terminal, and not with
// --no-color or NO_COLOR set (no-color.org), so logs and pipes never get escape codes.
func TestColourOnlyOnATerminalUnlessTurnedOff(t *testing.T) {
	inRepoRoot(t)
	file := "examples/field-reports/04-instance-profile-arn.yaml"
	const escape = "\x1b["
	for _, tc := range []struct {
		name    string
		args    []string
		noColor string
		want    bool
	}{
		{name: "a terminal", args: []string{"check", "-f", file}, want: true},
		{name: "--no-color", args: []string{"check", "-f", file, "--no-color"}},
		{name: "NO_COLOR=1", args: []string{"check", "-f", file}, noColor: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			out := onTerminal(t, tc.args...)
			if !strings.Contains(out, "instance-profile-arn") {
				t.Fatalf("the terminal showed no finding:\n%q", out)
			}
			if got := strings.Contains(out, escape); got != tc.want {
				t.Errorf("colour escapes on the terminal: %v, want %v:\n%q", got, tc.want, out)
			}
		})
	}
}
