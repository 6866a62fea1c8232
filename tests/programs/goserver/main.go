// A static Go HTTP server (CGO_ENABLED=0): the Go runtime's own raw
// system calls, threads, vDSO clock, signal-based preemption and garbage
// collector, at CPL0 as `ukl run --binary` starts it.  GET / answers with
// a count; GET /quit prints what the server saw and exits 0.
package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

// cs returns the code segment selector (cs_amd64.s); its low 2 bits are the CPL.
func cs() uint64

// spin keeps a goroutine busy without calls, so that the scheduler must
// preempt it with a signal (SIGURG) for the others to run on its thread.
func spin(stop *atomic.Bool) {
	x := 0
	for !stop.Load() {
		x++
	}
	_ = x
}

// sink keeps each request's buffer on the heap, for the collector.
var sink atomic.Value

func main() {
	var served atomic.Int64
	var stop atomic.Bool
	for i := 0; i < runtime.NumCPU(); i++ {
		go spin(&stop)
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		sink.Store(make([]byte, 256<<10))
		fmt.Fprintf(w, "request %d\n", n)
	})
	http.HandleFunc("/quit", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "bye")
		go func() {
			time.Sleep(100 * time.Millisecond)
			stop.Store(true)
			var stats runtime.MemStats
			runtime.ReadMemStats(&stats)
			fmt.Printf("CPL %d\nserved %d requests\ngarbage collected: %t\n",
				cs()&3, served.Load(), stats.NumGC > 0)
			os.Exit(0)
		}()
	})
	if err := http.ListenAndServe(":8080", nil); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
