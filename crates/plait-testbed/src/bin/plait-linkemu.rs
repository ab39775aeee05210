//! plait-linkemu: the testbed's link emulator.
//!
//! `plait-linkemu CONFIG.json` opens one TUN device per host inside the host's network
//! namespace (setns, then /dev/net/tun with TUNSETIFF; the devices vanish with the process),
//! writes the ready file, then forwards every IPv4 packet read from a host's device along the
//! route of its (source, destination) addresses through the link core (`plait_testbed::link`)
//! and writes it to the destination host's device at its ideal time. It pins itself to the
//! configured CPU and asks for SCHED_FIFO (recorded as false when not permitted). On SIGTERM
//! or SIGINT it writes its counters and lateness statistics as JSON to the stats file
//! (through a temporary file and a rename) and exits 0. On SIGUSR1 it writes the same
//! snapshot to `<stats file>.mark` and goes on (the end of the warm-up: the caller subtracts);
//! on SIGUSR2 to `<stats file>.end` (the end of the measurement window, before the endpoints stop).

use std::collections::HashMap;
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use plait_testbed::config::Config;
use plait_testbed::lateness::Lateness;
use plait_testbed::link::{DropCause, Emulator};
use plait_testbed::spin::SpinBudget;
use plait_testbed::{pcap, sys};
use serde_json::json;

/// The largest packet a TUN read returns (an IPv4 packet's length field is 16 bits).
const MAX_PACKET: usize = 65536;

/// A packet in flight: its bytes, the host it goes to and its route (an address pair).
struct Packet {
    bytes: Vec<u8>,
    host: usize,
    route: usize,
}

/// The flow key of an IPv4 packet: addresses, protocol and (TCP/UDP, unfragmented) ports.
type FlowKey = (Ipv4Addr, u16, Ipv4Addr, u16, u8);

fn flow_key(p: &[u8]) -> Option<FlowKey> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(p[0] & 0xf) * 4;
    let src = Ipv4Addr::new(p[12], p[13], p[14], p[15]);
    let dst = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
    let proto = p[9];
    let fragment_offset = u16::from_be_bytes([p[6], p[7]]) & 0x1fff;
    let (sport, dport) =
        if (proto == 6 || proto == 17) && fragment_offset == 0 && p.len() >= ihl + 4 {
            (
                u16::from_be_bytes([p[ihl], p[ihl + 1]]),
                u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]),
            )
        } else {
            (0, 0)
        };
    Some((src, sport, dst, dport, proto))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: plait-linkemu CONFIG.json");
        return ExitCode::from(2);
    }
    match run(&args[1]) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("plait-linkemu: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(config_path: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(config_path).map_err(|e| format!("{config_path}: {e}"))?;
    let config: Config = serde_json::from_str(&text).map_err(|e| format!("{config_path}: {e}"))?;
    config.check().map_err(|e| format!("{config_path}: {e}"))?;
    sys::install_stop_handler().map_err(|e| format!("signal handlers: {e}"))?;
    sys::install_mark_handler().map_err(|e| format!("signal handlers: {e}"))?;
    sys::die_with_parent();

    let mut tuns: Vec<File> = Vec::new();
    for host in &config.hosts {
        let tun = sys::open_tun_in_netns(&host.netns, &host.tun)
            .map_err(|e| format!("TUN {} in namespace {}: {e}", host.tun, host.netns))?;
        tuns.push(tun);
    }
    let links = config
        .links
        .iter()
        .map(|l| l.build())
        .collect::<Result<Vec<_>, _>>()?;
    let routes: Vec<Vec<usize>> = config.routes.iter().map(|r| r.links.clone()).collect();
    let route_of: HashMap<(Ipv4Addr, Ipv4Addr), usize> = config
        .routes
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.src, r.dst), i))
        .collect();
    let route_host: Vec<usize> = config
        .routes
        .iter()
        .map(|r| config.host_of(r.dst).expect("checked"))
        .collect();
    let mut emulator: Emulator<Packet> = Emulator::new(links, routes);

    // Timing: pinned, real-time, no timer slack (docs/testbed.md, "Timing").
    let pinned = match config.cpu {
        Some(cpu) => match sys::pin_to_cpu(cpu) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("plait-linkemu: could not pin to CPU {cpu}: {e}");
                false
            }
        },
        None => false,
    };
    let sched_fifo = match sys::set_fifo(50) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("plait-linkemu: SCHED_FIFO not granted ({e}); running unprioritised");
            false
        }
    };
    sys::set_min_timer_slack();
    let awake = Arc::new(AtomicBool::new(config.keep_awake));
    let mut keepers = Vec::new();
    if config.keep_awake {
        for cpu in 0..sys::cpu_count() {
            let awake = Arc::clone(&awake);
            keepers.push(std::thread::spawn(move || {
                // SCHED_IDLE: runs only when the CPU would otherwise halt.
                let _ = sys::pin_to_cpu(cpu);
                let _ = sys::set_idle();
                while awake.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            }));
        }
    }

    File::create(&config.ready_file).map_err(|e| format!("{}: {e}", config.ready_file))?;

    let fds: Vec<_> = tuns.iter().map(|t| t.as_raw_fd()).collect();
    let mut poller = sys::Poller::new(&fds);
    let mut ready = Vec::with_capacity(fds.len());
    let mut flows: HashMap<FlowKey, u32> = HashMap::new();
    let mut flow_keys: Vec<FlowKey> = Vec::new();
    let mut lateness = Lateness::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let (mut no_route, mut not_ipv4, mut write_errors) = (0u64, 0u64, 0u64);
    let mut delivered = 0u64;
    // Per route (source and destination address pair): packets and bytes delivered, the wire's
    // own count of what each MPTCP subflow carried.
    let mut route_delivered: Vec<[u64; 2]> = vec![[0, 0]; config.routes.len()];
    let mut budget = SpinBudget::new(config.spin_window_ns, config.spin_share);
    let mut spinning_since: Option<u64> = None;
    let mut spun_ns = 0u64;
    let mut rounds = 0u64;
    // Captures: link direction -> writer.
    let mut pcap_writers: Vec<std::io::BufWriter<File>> = Vec::new();
    let mut pcap_of_link: Vec<Option<usize>> = vec![None; config.links.len()];
    for p in &config.pcap {
        let mut w =
            std::io::BufWriter::new(File::create(&p.file).map_err(|e| format!("{}: {e}", p.file))?);
        pcap::write_header(&mut w).map_err(|e| format!("{}: {e}", p.file))?;
        for &l in &p.links {
            pcap_of_link[l] = Some(pcap_writers.len());
        }
        pcap_writers.push(w);
    }
    let mut pcap_errors = 0u64;
    let realtime_epoch = sys::realtime_ns();
    let epoch = sys::monotonic_ns();
    let now = || sys::monotonic_ns() - epoch;
    // Scenario events on the emulator's clock: the run starts at t0 (CLOCK_REALTIME).
    let t0 = config.t0_realtime_ns.unwrap_or(realtime_epoch);
    for e in &config.events {
        let at = (t0 + e.at_ns).saturating_sub(realtime_epoch);
        match (e.up, &e.loss) {
            (Some(up), _) => emulator.schedule_link_state(at, e.link, up),
            (None, Some(table)) => {
                emulator.schedule_loss(at, e.link, config.links[e.link].loss_model(table)?)
            }
            (None, None) => unreachable!("checked"),
        }
    }

    while !sys::stop_requested() {
        for (taken, suffix) in [(sys::take_mark(), "mark"), (sys::take_end_mark(), "end")] {
            if !taken {
                continue;
            }
            let run = RunInfo {
                pinned,
                cpu: config.cpu,
                sched_fifo,
                keep_awake: config.keep_awake,
                delivered,
                route_delivered: route_delivered.clone(),
                no_route,
                not_ipv4,
                write_errors,
                spun_ns,
                rounds,
            };
            let path = format!("{}.{suffix}", config.stats_file);
            write_stats(
                &config,
                &mut emulator,
                &flow_keys,
                &lateness,
                &run,
                now(),
                &path,
            )?;
        }
        // Deliver what is due.
        let t = now();
        let mut tap = |link: usize, departure: u64, p: &Packet| {
            if let Some(w) = pcap_of_link[link] {
                if pcap::write_packet(&mut pcap_writers[w], realtime_epoch + departure, &p.bytes)
                    .is_err()
                {
                    pcap_errors += 1;
                }
            }
        };
        while let Some(d) = emulator.poll_delivery_tapped(t, &mut tap) {
            let written = now();
            match tuns[d.payload.host].write(&d.payload.bytes) {
                Ok(n) => {
                    lateness.record(d.ideal, written);
                    delivered += 1;
                    let r = &mut route_delivered[d.payload.route];
                    r[0] += 1;
                    r[1] += n as u64;
                }
                Err(_) => write_errors += 1,
            }
            spare.push(d.payload.bytes);
        }
        // Wait for input or the next departure: sleep when it is far, spin when it is near
        // (within the spin budget; past it, sleep to the departure itself).
        let before = now();
        if let Some(since) = spinning_since.take() {
            budget.record(before, before - since);
            spun_ns += before - since;
        }
        let timeout = emulator.poll_timeout().map(|at| at.saturating_sub(before));
        let spin = budget.may_spin(before);
        let wait = match timeout {
            Some(left) if spin && left <= config.spin_ns => {
                spinning_since = Some(before);
                Some(0)
            }
            Some(left) if spin => Some(left - config.spin_ns),
            Some(left) => Some(left),
            None => Some(100_000_000), // re-check the stop flag now and then
        };
        rounds += 1;
        poller
            .wait(wait, &mut ready)
            .map_err(|e| format!("ppoll: {e}"))?;
        for (host, &is_ready) in ready.iter().enumerate() {
            if !is_ready {
                continue;
            }
            // Bounded: at most 64 packets per device per round, so deliveries are not starved.
            for _ in 0..64 {
                // A recycled buffer (or a new one): the read fills only the packet's bytes.
                let mut buf = spare.pop().unwrap_or_default();
                match sys::read_packet(&tuns[host], &mut buf, MAX_PACKET) {
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        spare.push(buf);
                        break;
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {
                        spare.push(buf);
                        break;
                    }
                    Err(e) => return Err(format!("read from {}: {e}", config.hosts[host].tun)),
                }
                let arrival = now();
                let Some(key) = flow_key(&buf) else {
                    not_ipv4 += 1;
                    spare.push(buf);
                    continue;
                };
                let Some(&route) = route_of.get(&(key.0, key.2)) else {
                    no_route += 1;
                    spare.push(buf);
                    continue;
                };
                let flow = *flows.entry(key).or_insert_with(|| {
                    flow_keys.push(key);
                    (flow_keys.len() - 1) as u32
                });
                let size = buf.len() as u32;
                let packet = Packet {
                    bytes: buf,
                    host: route_host[route],
                    route,
                };
                // A dropped packet's buffer is simply freed; drops are counted by the core.
                let _: Result<(), DropCause> =
                    emulator.handle_packet(arrival, route, flow, size, packet);
            }
        }
    }
    for w in &mut pcap_writers {
        if w.flush().is_err() {
            pcap_errors += 1;
        }
    }
    if pcap_errors > 0 {
        eprintln!("plait-linkemu: {pcap_errors} packets could not be written to the captures");
    }
    awake.store(false, Ordering::Relaxed);
    for k in keepers {
        let _ = k.join();
    }
    let end = now();
    let run = RunInfo {
        pinned,
        cpu: config.cpu,
        sched_fifo,
        keep_awake: config.keep_awake,
        delivered,
        route_delivered,
        no_route,
        not_ipv4,
        write_errors,
        spun_ns,
        rounds,
    };
    write_stats(
        &config,
        &mut emulator,
        &flow_keys,
        &lateness,
        &run,
        end,
        &config.stats_file,
    )?;
    Ok(())
}

/// What the statistics report besides the links.
struct RunInfo {
    pinned: bool,
    cpu: Option<usize>,
    sched_fifo: bool,
    keep_awake: bool,
    delivered: u64,
    route_delivered: Vec<[u64; 2]>,
    no_route: u64,
    not_ipv4: u64,
    write_errors: u64,
    /// Time in rounds that polled without sleeping (a departure was near), their work
    /// included, ns.
    spun_ns: u64,
    /// Rounds of the loop (one wait each: a sleep unless the round spun or input was ready).
    rounds: u64,
}

/// Writes the counters at time `end` (ns since the start) to `path`, atomically.
fn write_stats(
    config: &Config,
    emulator: &mut Emulator<Packet>,
    flow_keys: &[FlowKey],
    lateness: &Lateness,
    run: &RunInfo,
    end: u64,
    path: &str,
) -> Result<(), String> {
    emulator.advance_all(end);

    let flow_names: Vec<String> = flow_keys
        .iter()
        .map(|(s, sp, d, dp, proto)| format!("{proto}:{s}:{sp}>{d}:{dp}"))
        .collect();
    let links_json: Vec<_> = config
        .links
        .iter()
        .zip(emulator.links())
        .map(|(cfg, l)| {
            let s = l.stats();
            let by_flow: serde_json::Map<String, serde_json::Value> = s
                .dropped_by_flow
                .iter()
                .map(|(f, [q, loss, down])| {
                    (
                        flow_names[*f as usize].clone(),
                        json!({"queue": q, "loss": loss, "down": down}),
                    )
                })
                .collect();
            json!({
                "name": cfg.name,
                "rate_bps": cfg.rate_bps,
                "delay_ns": cfg.delay_ns,
                "arrived_packets": s.arrived_packets,
                "arrived_bytes": s.arrived_bytes,
                "departed_packets": s.departed_packets,
                "departed_bytes": s.departed_bytes,
                "dropped_queue": s.dropped_queue,
                "dropped_loss": s.dropped_loss,
                "dropped_down": s.dropped_down,
                "dropped_by_flow": by_flow,
                "max_queue_packets": s.max_queue_packets,
                "max_queue_bytes": s.max_queue_bytes,
                "mean_queue_packets": if end > 0 { s.queue_packet_ns as f64 / end as f64 } else { 0.0 },
                "mean_queue_bytes": if end > 0 { s.queue_byte_ns as f64 / end as f64 } else { 0.0 },
                // The integrals themselves (waiting packets and bytes × ns since the start):
                // the caller takes the window's time average from two snapshots.
                "queue_packet_ns": s.queue_packet_ns as f64,
                "queue_byte_ns": s.queue_byte_ns as f64,
                "busy_ns": s.busy_ns,
            })
        })
        .collect();
    let (cpu_user_ns, cpu_system_ns) = sys::thread_cpu_ns();
    let stats = json!({
        "duration_ns": end,
        // The forwarding thread's CPU time since it started (user, system: the kernel's work
        // in its read and write calls, the TCP receive path of what it writes included), the
        // time of the rounds that spun (polled without sleeping: CPU time too) and the rounds.
        "cpu_user_ns": cpu_user_ns,
        "cpu_system_ns": cpu_system_ns,
        "spin_ns": run.spun_ns,
        "rounds": run.rounds,
        "pinned": run.pinned,
        "cpu": run.cpu,
        "sched_fifo": run.sched_fifo,
        "keep_awake": run.keep_awake,
        "delivered_packets": run.delivered,
        "no_route_packets": run.no_route,
        "not_ipv4_packets": run.not_ipv4,
        "write_errors": run.write_errors,
        "lateness": lateness.summary(),
        "links": links_json,
        "routes": config
            .routes
            .iter()
            .zip(&run.route_delivered)
            .map(|(r, [p, b])| json!({"src": r.src.to_string(), "dst": r.dst.to_string(),
                                     "delivered_packets": p, "delivered_bytes": b}))
            .collect::<Vec<_>>(),
    });
    let tmp = format!("{path}.tmp");
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(&stats).expect("serialisable"),
    )
    .and_then(|()| std::fs::rename(&tmp, path))
    .map_err(|e| format!("{path}: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_key_of_a_tcp_packet() {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[20..24].copy_from_slice(&[0x13, 0x88, 0x00, 0x50]);
        assert_eq!(
            flow_key(&p),
            Some((
                Ipv4Addr::new(10, 0, 0, 1),
                5000,
                Ipv4Addr::new(10, 0, 0, 2),
                80,
                6
            ))
        );
        p[0] = 0x60;
        assert_eq!(flow_key(&p), None);
    }
}
