// health-probe: a stock gRPC health client, in the manner of
// grpc-health-probe, for the Wine suite: grpc-go's own generated client
// (google.golang.org/grpc/health/grpc_health_v1, Debian's
// golang-google-grpc-dev) over a named pipe (the bench client's
// pipe_windows.go, copied in at build time). No csi-proxy-specific code.
//
//	health-probe -pipe \\.\pipe\csi-proxy-filesystem-v1 [-service NAME] [-watch N]
//
// Check: prints "status: SERVING" (or the error) and exits as
// grpc-health-probe does: 0 SERVING, 2 connection failure, 3 the call
// failed (its code is printed), 4 not SERVING. -watch N: Watch instead,
// printing the first N messages ("watch: SERVING"), exit 0 when N arrived
// or the stream ended with OK ("watch ended: OK").
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

var (
	flagPipe    = flag.String("pipe", `\\.\pipe\csi-proxy-filesystem-v1`, "pipe to probe")
	flagService = flag.String("service", "", "service name to ask about")
	flagWatch   = flag.Int("watch", 0, "Watch and print this many messages")
	flagTimeout = flag.Duration("timeout", 10*time.Second, "deadline of the whole probe")
)

func main() {
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *flagTimeout)
	defer cancel()
	pipe := *flagPipe
	conn, err := grpc.DialContext(ctx, "csi-proxy", grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return dialPipe(ctx, pipe)
		}))
	if err != nil {
		fmt.Printf("error: connecting to %s: %v\n", pipe, err)
		os.Exit(2)
	}
	defer conn.Close()
	c := grpc_health_v1.NewHealthClient(conn)
	req := &grpc_health_v1.HealthCheckRequest{Service: *flagService}
	if *flagWatch > 0 {
		w, err := c.Watch(ctx, req)
		if err != nil {
			fmt.Printf("error: Watch: %v\n", err)
			os.Exit(3)
		}
		for i := 0; i < *flagWatch; i++ {
			m, err := w.Recv()
			if err == io.EOF {
				fmt.Println("watch ended: OK")
				return
			}
			if err != nil {
				fmt.Printf("error: Watch: code %s: %s\n", status.Code(err), status.Convert(err).Message())
				os.Exit(3)
			}
			fmt.Printf("watch: %s\n", m.GetStatus())
		}
		return
	}
	r, err := c.Check(ctx, req)
	if err != nil {
		fmt.Printf("error: Check: code %s: %s\n", status.Code(err), status.Convert(err).Message())
		os.Exit(3)
	}
	fmt.Printf("status: %s\n", r.GetStatus())
	if r.GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
		os.Exit(4)
	}
}
