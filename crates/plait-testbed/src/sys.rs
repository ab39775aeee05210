//! The system calls the testbed needs, each a small safe wrapper: opening a TUN device inside
//! another network namespace, CPU pinning and real-time priority, a monotonic clock, waiting
//! on file descriptors with nanosecond timeouts, stop signals, and TCP socket options.
//! This is the crate's only unsafe code.

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags (linux/if.h; 40 bytes).
#[repr(C)]
struct IfReqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// `_IOW('T', 202, int)` (linux/if_tun.h).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// Opens a TUN device called `name` (IFF_TUN | IFF_NO_PI: raw IP packets, no packet-info
/// header) inside the network namespace `/run/netns/<netns>`, non-blocking, and returns to
/// the original namespace. The device is not persistent: it disappears when the process
/// (every copy of the descriptor) closes it, so a crashed emulator leaves no device behind.
pub fn open_tun_in_netns(netns: &str, name: &str) -> io::Result<File> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("device name {name:?} longer than 15 bytes"),
        ));
    }
    let original = File::open("/proc/self/ns/net")?;
    let target = File::open(format!("/run/netns/{netns}"))?;
    // SAFETY: setns on valid descriptors; this process is single-threaded while it runs.
    check(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
    let opened = open_tun(name);
    // SAFETY: as above; returning to the namespace we came from.
    let back = check(unsafe { libc::setns(original.as_raw_fd(), libc::CLONE_NEWNET) });
    let tun = opened?;
    back?;
    Ok(tun)
}

fn open_tun(name: &str) -> io::Result<File> {
    let path = c"/dev/net/tun";
    // SAFETY: a valid NUL-terminated path.
    let fd = check(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: fd was just returned by open and is owned by nobody else.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut req = IfReqFlags {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which `req` lays out (40 bytes).
    check(unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req as *mut IfReqFlags) })?;
    Ok(file)
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        check(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))?;
    }
    Ok(())
}

/// Number of CPUs this process may run on.
pub fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Gives the calling thread SCHED_FIFO at `priority` (1..=99).
pub fn set_fifo(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: a valid sched_param.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// Gives the calling thread SCHED_IDLE (runs only when nothing else wants the CPU).
pub fn set_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: a valid sched_param.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) })?;
    Ok(())
}

/// Asks for 1 ns timer slack (the default 50 us would make every timed wake-up late).
pub fn set_min_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Asks for SIGTERM when the parent dies (PR_SET_PDEATHSIG), so that a testbed run killed
/// with SIGKILL does not leave its emulator or endpoints running.
pub fn die_with_parent() {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME in nanoseconds since the epoch (for times shared between processes).
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Waits until one of `fds` is readable or `timeout_ns` passes (None: forever). Returns the
/// readable flags; an interrupted wait (a signal) returns all false.
pub fn wait_readable(
    fds: &[RawFd],
    timeout_ns: Option<u64>,
    ready: &mut Vec<bool>,
) -> io::Result<()> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: polls is a valid array of its length; ts_ptr is null or a valid timespec.
    let ret = unsafe {
        libc::ppoll(
            polls.as_mut_ptr(),
            polls.len() as libc::nfds_t,
            ts_ptr,
            std::ptr::null(),
        )
    };
    ready.clear();
    if ret < 0 {
        let err = io::Error::last_os_error();
        if err.kind() == io::ErrorKind::Interrupted {
            ready.resize(fds.len(), false);
            return Ok(());
        }
        return Err(err);
    }
    ready.extend(polls.iter().map(|p| p.revents & libc::POLLIN != 0));
    Ok(())
}

static STOP: AtomicBool = AtomicBool::new(false);
static MARK: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_mark_signal(_: libc::c_int) {
    MARK.store(true, Ordering::SeqCst);
}

/// Makes SIGUSR1 set a flag read (and cleared) by [`take_mark`]: the emulator snapshots its
/// counters then, at the end of the scenario's warm-up.
pub fn install_mark_handler() -> io::Result<()> {
    // SAFETY: as in install_stop_handler.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_mark_signal as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        check(libc::sigaction(
            libc::SIGUSR1,
            &action,
            std::ptr::null_mut(),
        ))?;
    }
    Ok(())
}

pub fn take_mark() -> bool {
    MARK.swap(false, Ordering::SeqCst)
}

/// Makes SIGTERM and SIGINT set a flag (read with [`stop_requested`]) instead of killing the
/// process, without SA_RESTART so that a blocked wait returns.
pub fn install_stop_handler() -> io::Result<()> {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: a zeroed sigaction with a valid handler; the handler only stores an atomic.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            check(libc::sigaction(sig, &action, std::ptr::null_mut()))?;
        }
    }
    Ok(())
}

pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Sets the socket's congestion controller by name (TCP_CONGESTION).
pub fn set_congestion(fd: RawFd, name: &str) -> io::Result<()> {
    // SAFETY: the option value is the name's bytes and its length.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// The fields of TCP_INFO the testbed reports (linux/tcp.h `struct tcp_info`).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct TcpInfo {
    pub state: u8,
    pub snd_mss: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub total_retrans: u32,
    pub lost: u32,
    pub bytes_acked: u64,
    pub bytes_retrans: u64,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
}

/// Kernel `struct tcp_info` up to `tcpi_bytes_retrans` (Linux 4.19+; 6.x adds more fields
/// after it, which a shorter buffer simply does not receive).
#[repr(C)]
#[derive(Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
}

/// Reads TCP_INFO of a TCP socket.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `raw`.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut RawTcpInfo).cast(),
            &mut len,
        )
    })?;
    Ok(TcpInfo {
        state: raw.state,
        snd_mss: raw.snd_mss,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        min_rtt_us: raw.min_rtt,
        snd_cwnd: raw.snd_cwnd,
        snd_ssthresh: raw.snd_ssthresh,
        total_retrans: raw.total_retrans,
        lost: raw.lost,
        bytes_acked: raw.bytes_acked,
        bytes_retrans: raw.bytes_retrans,
        data_segs_out: raw.data_segs_out,
        delivery_rate: raw.delivery_rate,
    })
}

/// IPPROTO_MPTCP (include/uapi/linux/in.h).
const IPPROTO_MPTCP: libc::c_int = 262;

/// A new IPv4 MPTCP stream socket (RFC 8684; Linux ≥ 5.6).
fn mptcp_socket() -> Result<libc::c_int, String> {
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            IPPROTO_MPTCP,
        )
    };
    if fd < 0 {
        return Err(format!(
            "socket(IPPROTO_MPTCP): {} (is net.mptcp.enabled = 1?)",
            io::Error::last_os_error()
        ));
    }
    Ok(fd)
}

fn sockaddr(addr: &std::net::SocketAddr) -> Result<libc::sockaddr_in, String> {
    let std::net::SocketAddr::V4(v4) = addr else {
        return Err(format!("{addr}: IPv4 only"));
    };
    Ok(libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    })
}

/// A listening MPTCP socket on `addr`.
pub fn mptcp_listen(addr: &std::net::SocketAddr) -> Result<std::net::TcpListener, String> {
    let fd = mptcp_socket()?;
    // Owned from here: closed on every error path.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(fd) };
    let sa = sockaddr(addr)?;
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    if unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, len) } < 0 {
        return Err(format!("bind {addr}: {}", io::Error::last_os_error()));
    }
    if unsafe { libc::listen(fd, 128) } < 0 {
        return Err(format!("listen {addr}: {}", io::Error::last_os_error()));
    }
    Ok(listener)
}

/// An MPTCP connection to `addr` (blocking connect: the SYN retries bound its time).
pub fn mptcp_connect(addr: &std::net::SocketAddr) -> Result<std::net::TcpStream, String> {
    let fd = mptcp_socket()?;
    let stream = unsafe { std::net::TcpStream::from_raw_fd(fd) };
    let sa = sockaddr(addr)?;
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    if unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) } < 0 {
        return Err(format!("connect {addr}: {}", io::Error::last_os_error()));
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ifreq_and_tcp_info_layouts() {
        assert_eq!(std::mem::size_of::<IfReqFlags>(), 40);
        // tcpi_bytes_retrans ends at byte 216 of struct tcp_info (linux/tcp.h, 4.19+).
        assert_eq!(std::mem::size_of::<RawTcpInfo>(), 216);
    }
}
