// Command gentree writes the reproducible trees tests/bench/bench.sh measures.
// The same flags always produce the same paths, sizes and contents.
//
//	go run ./tests/bench/gentree -kind small DIR   # 50,000 files, 0-16 KiB, ~1,000 dirs
//	go run ./tests/bench/gentree -kind large DIR   # 4 files of 512 MiB
//	go run ./tests/bench/gentree -kind many DIR    # 202,040 entries, files of 0-64 bytes
//	go run ./tests/bench/gentree -kind huge DIR    # 1,010,100 entries, files of 0-64 bytes
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

func main() {
	kind := flag.String("kind", "small", "tree to write: small, large, many or huge")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gentree -kind small|large|many|huge DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	var err error
	switch *kind {
	case "small":
		// 25 top directories x 40 subdirectories = 1,025 directories,
		// 50 files in each leaf: 50,000 files of 0..16 KiB, half text.
		err = files(dir, 25, 40, 50, 16<<10)
	case "many":
		// 40 x 50 = 2,040 directories, 100 files in each leaf: 202,040 entries.
		err = files(dir, 40, 50, 100, 64)
	case "huge":
		// 100 x 100 = 10,100 directories, 100 files in each leaf: 1,010,100 entries.
		err = files(dir, 100, 100, 100, 64)
	case "large":
		err = large(dir, 4, 512<<20)
	default:
		err = fmt.Errorf("unknown kind %q", *kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
}

// fill writes n deterministic bytes for seed into b: ASCII text lines when
// text is set (so the gate's text keeper sees realistic input), else
// pseudo-random binary.
func fill(b []byte, seed uint64, text bool) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	r := rand.NewChaCha8(key)
	r.Read(b)
	if text {
		for i := range b {
			c := b[i] % 64
			switch {
			case c == 0:
				b[i] = '\n'
			case c < 10:
				b[i] = ' '
			default:
				b[i] = 'a' + c%26
			}
		}
	}
}

func files(root string, top, sub, per, maxSize int) error {
	type job struct {
		dir   string
		first int
	}
	jobs := make(chan job)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0)*2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, maxSize+1)
			for j := range jobs {
				if err := os.MkdirAll(j.dir, 0o755); err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				for k := 0; k < per; k++ {
					idx := uint64(j.first + k)
					size := int(rand.New(rand.NewPCG(idx, 0x9e3779b97f4a7c15)).IntN(maxSize + 1))
					b := buf[:size]
					fill(b, idx, idx%2 == 0)
					ext := ".bin"
					if idx%2 == 0 {
						ext = ".txt"
					}
					p := filepath.Join(j.dir, fmt.Sprintf("f%06d%s", idx, ext))
					if err := os.WriteFile(p, b, 0o644); err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			}
		}()
	}
	n := 0
	for t := 0; t < top; t++ {
		for s := 0; s < sub; s++ {
			jobs <- job{dir: filepath.Join(root, fmt.Sprintf("d%02d", t), fmt.Sprintf("s%02d", s)), first: n}
			n += per
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func large(root string, count, size int) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, count)
	for i := 0; i < count; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f, err := os.Create(filepath.Join(root, fmt.Sprintf("big%d.bin", i)))
			if err != nil {
				errs[i] = err
				return
			}
			defer f.Close()
			var key [32]byte
			binary.LittleEndian.PutUint64(key[:], uint64(1000+i))
			r := rand.NewChaCha8(key)
			buf := make([]byte, 4<<20)
			for left := size; left > 0; left -= len(buf) {
				b := buf[:min(left, len(buf))]
				r.Read(b)
				if _, err := f.Write(b); err != nil {
					errs[i] = err
					return
				}
			}
			errs[i] = f.Close()
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
