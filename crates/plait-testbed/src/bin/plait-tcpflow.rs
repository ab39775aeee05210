//! plait-tcpflow: the testbed's traffic endpoints, plain kernel TCP sockets.
//!
//! ```text
//! plait-tcpflow server --listen ADDR:PORT --t0-ns T --sample-ns S --report FILE [--mptcp]
//! plait-tcpflow client --connect ADDR:PORT --cc NAME --t0-ns T --start-ns A --stop-ns B
//!                      [--bytes N] [--mss N] --sample-ns S [--mark-ns M] --report FILE [--mptcp]
//! ```
//!
//! `--mptcp` opens the socket with protocol IPPROTO_MPTCP (262, RFC 8684 in Linux ≥ 5.6): the
//! kernel's path manager adds the subflows, TCP_CONGESTION set on the MPTCP socket is applied
//! to every subflow (net/mptcp/sockopt.c), and TCP_INFO reads the first subflow's; the client
//! also reports every subflow's TCP_INFO at the mark and at the end (MPTCP_TCPINFO).
//!
//! Times are CLOCK_REALTIME nanoseconds: `t0` is the run's origin, shared by every process;
//! `start`/`stop` are relative to it. The server accepts one connection and records the bytes
//! delivered to the application at every sample tick (cumulative, `[t_ns, bytes]`). The
//! client connects at `start`, sets the congestion controller (TCP_CONGESTION), writes until
//! it has sent `bytes` (a finite transfer) or `stop` passes, and records TCP_INFO at every
//! sample tick, at `--mark-ns` (the scenario's warm-up end, reported as `mark`: the runner
//! subtracts it from the end's counters) and at the end (for a finite transfer, when every
//! byte is acknowledged). With `--mss N` (TCP only) the client clamps the connection's MSS
//! before connecting (TCP_MAXSEG of N plus the timestamp option's 12 bytes when timestamps are
//! on) so that segments carry N payload bytes, and sends nothing, reporting an error, if the
//! kernel's `tcpi_snd_mss` is another. Each writes its report as JSON on exit; SIGTERM/SIGINT
//! end them early, report included.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::Duration;

use plait_testbed::sys::{self, TcpInfo};
use serde_json::json;

struct Args(Vec<String>);

impl Args {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .position(|a| a == key)
            .and_then(|i| self.0.get(i + 1))
            .map(String::as_str)
    }
    fn has(&self, key: &str) -> bool {
        self.0.iter().any(|a| a == key)
    }
    fn need(&self, key: &str) -> Result<&str, String> {
        self.get(key).ok_or_else(|| format!("missing {key}"))
    }
    fn num(&self, key: &str) -> Result<u64, String> {
        self.need(key)?
            .parse()
            .map_err(|_| format!("{key}: expected a whole number"))
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = argv.first().cloned() else {
        eprintln!("usage: plait-tcpflow server|client ...");
        return ExitCode::from(2);
    };
    let args = Args(argv);
    sys::die_with_parent();
    if let Err(e) = sys::install_stop_handler() {
        eprintln!("plait-tcpflow: {e}");
        return ExitCode::from(1);
    }
    let result = match mode.as_str() {
        "server" => server(&args),
        "client" => client(&args),
        _ => Err(format!("unknown mode {mode:?}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plait-tcpflow {mode}: {e}");
            ExitCode::from(1)
        }
    }
}

fn write_report(path: &str, value: &serde_json::Value) -> Result<(), String> {
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, serde_json::to_vec(value).expect("serialisable"))
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{path}: {e}"))
}

/// Nanoseconds since the run's origin (negative before it).
fn since(t0: u64) -> i64 {
    sys::realtime_ns() as i64 - t0 as i64
}

fn server(args: &Args) -> Result<(), String> {
    let listen: SocketAddr = args
        .need("--listen")?
        .parse()
        .map_err(|_| "--listen: expected ADDR:PORT".to_string())?;
    let t0 = args.num("--t0-ns")?;
    let sample = args.num("--sample-ns")?.max(1_000_000);
    let report = args.need("--report")?.to_string();
    let listener = if args.has("--mptcp") {
        sys::mptcp_listen(&listen)?
    } else {
        TcpListener::bind(listen).map_err(|e| format!("bind {listen}: {e}"))?
    };
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("listen: {e}"))?;
    // Ready to accept: the parent waits for this file before starting clients.
    std::fs::write(format!("{report}.listening"), b"").map_err(|e| format!("{report}: {e}"))?;
    let mut samples: Vec<(i64, u64)> = Vec::new();
    let mut total = 0u64;
    let mut first_byte: Option<i64> = None;
    let mut last_byte: Option<i64> = None;
    let mut stream: Option<TcpStream> = None;
    while stream.is_none() && !sys::stop_requested() {
        match listener.accept() {
            Ok((s, _)) => stream = Some(s),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2))
            }
            Err(e) => return Err(format!("accept: {e}")),
        }
    }
    if let Some(mut s) = stream {
        s.set_nonblocking(false).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_nanos(sample.min(20_000_000))))
            .map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 1 << 17];
        let mut next_tick = (since(t0).max(0) as u64 / sample + 1) * sample;
        loop {
            if sys::stop_requested() {
                break;
            }
            let n = match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => 0,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                Err(e) => return Err(format!("read: {e}")),
            };
            let t = since(t0);
            // Bytes read now were delivered after every tick before `t`.
            while t >= next_tick as i64 {
                samples.push((next_tick as i64, total));
                next_tick += sample;
            }
            if n > 0 {
                first_byte.get_or_insert(t);
                last_byte = Some(t);
                total += n as u64;
            }
        }
    }
    samples.push((since(t0), total));
    write_report(
        &report,
        &json!({"bytes": total, "first_byte_ns": first_byte, "last_byte_ns": last_byte,
                "samples": samples}),
    )
}

fn client(args: &Args) -> Result<(), String> {
    let peer: SocketAddr = args
        .need("--connect")?
        .parse()
        .map_err(|_| "--connect: expected ADDR:PORT".to_string())?;
    let cc = args.need("--cc")?.to_string();
    let t0 = args.num("--t0-ns")?;
    let start = args.num("--start-ns")? as i64;
    let stop = args.num("--stop-ns")? as i64;
    let limit = args
        .get("--bytes")
        .map(|b| b.parse::<u64>())
        .transpose()
        .map_err(|_| "--bytes: expected a whole number".to_string())?;
    let sample = args.num("--sample-ns")?.max(1_000_000);
    let mark_at = args
        .get("--mark-ns")
        .map(|m| m.parse::<i64>())
        .transpose()
        .map_err(|_| "--mark-ns: expected a whole number".to_string())?;
    let report = args.need("--report")?.to_string();
    // The payload bytes per segment asked for (the scenario's `mss`), if any.
    let mss = args
        .get("--mss")
        .map(|m| m.parse::<u32>())
        .transpose()
        .map_err(|_| "--mss: expected a whole number of bytes".to_string())?;

    // Wait for the start time (bounded by it; a stop signal ends the wait).
    while since(t0) < start && !sys::stop_requested() {
        let left = (start - since(t0)).clamp(0, 5_000_000) as u64;
        std::thread::sleep(Duration::from_nanos(left));
    }
    let mut infos: Vec<(i64, TcpInfo)> = Vec::new();
    let mut mark: Option<(i64, TcpInfo)> = None;
    // An MPTCP connection's subflows (local address, TCP_INFO) at the mark and at the end.
    let mptcp = args.has("--mptcp");
    let mut subflows_mark: Option<Vec<(String, TcpInfo)>> = None;
    let mut subflows_end: Option<Vec<(String, TcpInfo)>> = None;
    let mut sent = 0u64;
    let mut connect_ns = None;
    let mut error = None;
    if !sys::stop_requested() {
        let mut s = if args.has("--mptcp") {
            sys::mptcp_connect(&peer)?
        } else if let Some(mss) = mss {
            sys::tcp_connect_with_maxseg(&peer, mss + timestamp_option_bytes())?
        } else {
            TcpStream::connect_timeout(&peer, Duration::from_secs(3))
                .map_err(|e| format!("connect {peer}: {e}"))?
        };
        connect_ns = Some(since(t0));
        let fd = s.as_raw_fd();
        if let Some(mss) = mss {
            // The kernel decides: a path MTU or a peer's MSS below the clamp gives less.
            let got = sys::tcp_info(fd).map(|i| i.snd_mss).unwrap_or(0);
            if got != mss {
                // Reported, and nothing sent: a run at another MSS is not the one asked for.
                error = Some(format!(
                    "mss {mss}: the kernel sends {got} payload bytes per segment"
                ));
            }
        }
        sys::set_congestion(fd, &cc).map_err(|e| format!("TCP_CONGESTION {cc}: {e}"))?;
        s.set_nodelay(false).ok();
        s.set_write_timeout(Some(Duration::from_millis(5)))
            .map_err(|e| e.to_string())?;
        let chunk = vec![0x5au8; 1 << 16];
        let mut next_tick = (since(t0).max(0) as u64 / sample + 1) * sample;
        loop {
            if error.is_some() {
                break;
            }
            let t = since(t0);
            if mark.is_none() && mark_at.is_some_and(|m| t >= m) {
                if let Ok(info) = sys::tcp_info(fd) {
                    mark = Some((t, info));
                }
                if mptcp {
                    subflows_mark = subflow_infos(fd);
                }
            }
            while t >= next_tick as i64 {
                if let Ok(info) = sys::tcp_info(fd) {
                    infos.push((next_tick as i64, info));
                }
                next_tick += sample;
            }
            if sys::stop_requested() || t >= stop {
                break;
            }
            if limit.is_some_and(|l| sent >= l) {
                // A finite transfer keeps reading TCP_INFO until the kernel has sent and had
                // acknowledged every byte (or `stop`): its retransmissions and timeouts
                // happen after the application's last write.
                match sys::tcp_info(fd) {
                    Ok(i) if i.unacked > 0 || i.notsent_bytes > 0 => {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                    _ => break,
                }
            }
            let want = limit.map_or(chunk.len() as u64, |l| (l - sent).min(chunk.len() as u64));
            match s.write(&chunk[..want as usize]) {
                Ok(n) => sent += n as u64,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
                Err(e) => {
                    error = Some(format!("write: {e}"));
                    break;
                }
            }
        }
        if let Ok(info) = sys::tcp_info(fd) {
            infos.push((since(t0), info));
        }
        if mptcp {
            subflows_end = subflow_infos(fd);
        }
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    write_report(
        &report,
        &json!({"cc": cc, "sent": sent, "connect_ns": connect_ns, "error": error,
                "mark": mark.map(|(t, i)| json!({"t_ns": t, "info": i})),
                "subflows_mark": subflows_json(subflows_mark.as_deref()),
                "subflows_end": subflows_json(subflows_end.as_deref()),
                "tcp_info": infos.iter().map(|(t, i)| json!({"t_ns": t, "info": i})).collect::<Vec<_>>()}),
    )
}

/// The bytes of TCP options on every segment of a new connection in this namespace: the
/// timestamps (10 bytes padded to 12, RFC 7323) when `net.ipv4.tcp_timestamps` is on (the
/// default), which the kernel takes out of the MSS clamp (`tcp_mtu_to_mss`).
fn timestamp_option_bytes() -> u32 {
    let on = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_timestamps")
        .map_or(true, |v| v.trim() != "0");
    if on {
        12
    } else {
        0
    }
}

/// Each subflow's TCP_INFO (MPTCP_TCPINFO), read twice if the subflows changed in between.
fn subflow_infos(fd: std::os::fd::RawFd) -> Option<Vec<(String, TcpInfo)>> {
    sys::mptcp_subflow_infos(fd)
        .or_else(|_| sys::mptcp_subflow_infos(fd))
        .ok()
}

fn subflows_json(subflows: Option<&[(String, TcpInfo)]>) -> serde_json::Value {
    subflows.map_or(serde_json::Value::Null, |v| {
        v.iter()
            .map(|(local, info)| json!({"local": local, "info": info}))
            .collect()
    })
}
