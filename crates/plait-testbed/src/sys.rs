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

/// CPU time the calling thread has used, (user, system) in nanoseconds (getrusage with
/// RUSAGE_THREAD, Linux 2.6.26+): the emulator's own work per packet, without its keep-awake
/// threads (which spin at SCHED_IDLE on every CPU and would fill RUSAGE_SELF).
pub fn thread_cpu_ns() -> (u64, u64) {
    // SAFETY: rusage is plain data, written by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rusage to write into.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } < 0 {
        return (0, 0);
    }
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    (ns(usage.ru_utime), ns(usage.ru_stime))
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

/// Reads one packet from `fd` (a TUN device: one read returns one packet) into `buf`, which
/// holds exactly that packet afterwards (empty on an error); at most `max` bytes. The read goes
/// into the buffer's spare capacity (reserved up to `max`), so nothing past the packet is
/// written: zero-filling a 64 KiB buffer before every 1500-byte packet (`resize`) was a fifth
/// of the emulator's CPU time (docs/testbed.md, "CPU per packet").
pub fn read_packet(fd: &impl AsRawFd, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    buf.clear();
    buf.reserve(max);
    // SAFETY: the kernel writes at most `max` bytes at buf's start, within its capacity.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), max) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the first n bytes (n <= max <= capacity) were written by the read.
    unsafe { buf.set_len(n as usize) };
    Ok(n as usize)
}

/// Waits on a fixed set of descriptors with ppoll, keeping its `pollfd` array between waits
/// (the emulator waits once per round: no allocation per wait).
pub struct Poller {
    polls: Vec<libc::pollfd>,
}

impl Poller {
    pub fn new(fds: &[RawFd]) -> Self {
        Poller {
            polls: fds
                .iter()
                .map(|&fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect(),
        }
    }

    /// Waits until one of the descriptors is readable or `timeout_ns` passes (None: forever).
    /// Returns the readable flags in `ready`; an interrupted wait (a signal) returns all false.
    pub fn wait(&mut self, timeout_ns: Option<u64>, ready: &mut Vec<bool>) -> io::Result<()> {
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
                self.polls.as_mut_ptr(),
                self.polls.len() as libc::nfds_t,
                ts_ptr,
                std::ptr::null(),
            )
        };
        ready.clear();
        if ret < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                ready.resize(self.polls.len(), false);
                return Ok(());
            }
            return Err(err);
        }
        ready.extend(self.polls.iter().map(|p| p.revents & libc::POLLIN != 0));
        Ok(())
    }
}

static STOP: AtomicBool = AtomicBool::new(false);
static MARK: AtomicBool = AtomicBool::new(false);
static END_MARK: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" fn on_mark_signal(signal: libc::c_int) {
    if signal == libc::SIGUSR2 {
        END_MARK.store(true, Ordering::SeqCst);
    } else {
        MARK.store(true, Ordering::SeqCst);
    }
}

/// Makes SIGUSR1 set a flag read (and cleared) by [`take_mark`] and SIGUSR2 one read by
/// [`take_end_mark`]: the emulator snapshots its counters then, at the end of the scenario's
/// warm-up and at the end of its window (before the endpoints are stopped, so that the window's
/// link counters do not take in the idle time of the shutdown).
pub fn install_mark_handler() -> io::Result<()> {
    for signal in [libc::SIGUSR1, libc::SIGUSR2] {
        // SAFETY: as in install_stop_handler.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_mark_signal as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            check(libc::sigaction(signal, &action, std::ptr::null_mut()))?;
        }
    }
    Ok(())
}

pub fn take_mark() -> bool {
    MARK.swap(false, Ordering::SeqCst)
}

pub fn take_end_mark() -> bool {
    END_MARK.swap(false, Ordering::SeqCst)
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

/// The fields of TCP_INFO the testbed reports (linux/tcp.h `struct tcp_info`). Counters count
/// from the connection's start; the runner subtracts the warm-up's reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TcpInfo {
    /// Bytes of `struct tcp_info` the kernel filled (getsockopt's returned length): fields
    /// past it are absent (None), not zero.
    pub info_len: u32,
    pub state: u8,
    /// `tcpi_ca_state`: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss.
    pub ca_state: u8,
    pub snd_mss: u32,
    /// Segments sent and not yet acknowledged (`tcpi_unacked`), and bytes written by the
    /// application not yet sent (`tcpi_notsent_bytes`).
    pub unacked: u32,
    pub notsent_bytes: u32,
    /// Smoothed RTT and its mean deviation (RFC 6298 SRTT, RTTVAR), microseconds.
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// The least RTT sample in the kernel's min-RTT window (`tcp_min_rtt_wlen`, 300 s).
    pub min_rtt_us: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    /// Segments retransmitted (`tp->total_retrans`: fast, RACK, TLP and RTO retransmissions).
    pub total_retrans: u32,
    pub lost: u32,
    pub bytes_acked: u64,
    pub bytes_retrans: u64,
    /// Segments sent, pure ACKs, SYN and FIN included (`tcpi_segs_out`).
    pub segs_out: u32,
    /// Data segments sent, retransmissions included (`tcpi_data_segs_out`).
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    /// Data segments delivered to the peer, cumulatively or selectively acknowledged
    /// (`tcpi_delivered`, Linux 4.18+).
    pub delivered: Option<u32>,
    /// Payload bytes sent, retransmissions included (`tcpi_bytes_sent`, 4.19+).
    pub bytes_sent: Option<u64>,
    pub dsack_dups: Option<u32>,
    /// Retransmission timeouts that fired, recurring ones and SYN's included
    /// (`tcpi_total_rto`, Linux 6.7+), RTO recovery episodes (`tcpi_total_rto_recoveries`) and
    /// the milliseconds spent in them (`tcpi_total_rto_time`).
    pub total_rto: Option<u32>,
    pub total_rto_recoveries: Option<u32>,
    pub total_rto_time_ms: Option<u32>,
}

/// Kernel `struct tcp_info` up to `tcpi_total_rto_time` (include/uapi/linux/tcp.h of Linux
/// 6.7+, 248 bytes). Older kernels fill a prefix of it (they return the length they wrote); 7.0
/// appends Accurate ECN counters after it, which this shorter buffer does not receive.
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
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
    rcv_wnd: u32,
    rehash: u32,
    total_rto: u16,
    total_rto_recoveries: u16,
    total_rto_time: u32,
}

/// Whether the kernel's `len` bytes cover the field at `offset` of `size` bytes.
fn covers(len: usize, offset: usize, size: usize) -> bool {
    len >= offset + size
}

impl RawTcpInfo {
    /// The reported fields of the first `len` bytes the kernel wrote; a field past them is
    /// None (a kernel older than the field), never a zero read from our own buffer.
    fn report(&self, len: usize) -> TcpInfo {
        use std::mem::offset_of;
        let has = |offset: usize, size: usize| covers(len, offset, size);
        TcpInfo {
            info_len: len as u32,
            state: self.state,
            ca_state: self.ca_state,
            snd_mss: self.snd_mss,
            unacked: self.unacked,
            notsent_bytes: self.notsent_bytes,
            rtt_us: self.rtt,
            rttvar_us: self.rttvar,
            min_rtt_us: self.min_rtt,
            snd_cwnd: self.snd_cwnd,
            snd_ssthresh: self.snd_ssthresh,
            total_retrans: self.total_retrans,
            lost: self.lost,
            bytes_acked: self.bytes_acked,
            bytes_retrans: self.bytes_retrans,
            segs_out: self.segs_out,
            data_segs_out: self.data_segs_out,
            delivery_rate: self.delivery_rate,
            delivered: has(offset_of!(RawTcpInfo, delivered), 4).then_some(self.delivered),
            bytes_sent: has(offset_of!(RawTcpInfo, bytes_sent), 8).then_some(self.bytes_sent),
            dsack_dups: has(offset_of!(RawTcpInfo, dsack_dups), 4).then_some(self.dsack_dups),
            total_rto: has(offset_of!(RawTcpInfo, total_rto), 2)
                .then_some(u32::from(self.total_rto)),
            total_rto_recoveries: has(offset_of!(RawTcpInfo, total_rto_recoveries), 2)
                .then_some(u32::from(self.total_rto_recoveries)),
            total_rto_time_ms: has(offset_of!(RawTcpInfo, total_rto_time), 4)
                .then_some(self.total_rto_time),
        }
    }
}

/// Reads TCP_INFO of a TCP socket.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `raw` and returns how many it wrote.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut RawTcpInfo).cast(),
            &mut len,
        )
    })?;
    Ok(raw.report(len as usize))
}

/// SOL_MPTCP and its options MPTCP_TCPINFO, MPTCP_SUBFLOW_ADDRS (include/uapi/linux/mptcp.h,
/// Linux 5.16+): arrays with one element per subflow behind a `struct mptcp_subflow_data`.
const SOL_MPTCP: libc::c_int = 284;
const MPTCP_TCPINFO: libc::c_int = 2;
const MPTCP_SUBFLOW_ADDRS: libc::c_int = 3;
/// `struct mptcp_subflow_data` (16 bytes, 8-aligned).
const SUBFLOW_DATA_BYTES: usize = 16;
/// `struct mptcp_subflow_addrs`: two `struct __kernel_sockaddr_storage` (128 bytes each).
const SUBFLOW_ADDRS_BYTES: usize = 256;
/// Room for more subflows than the path manager makes (MPTCP_PM_ADDR_MAX = 8).
const MAX_SUBFLOWS: usize = 16;

/// One MPTCP array option: (subflows the kernel has, bytes per element it wrote, the bytes).
fn mptcp_subflow_array(
    fd: RawFd,
    opt: libc::c_int,
    elem: usize,
) -> io::Result<(usize, usize, Vec<u8>)> {
    // u64 words: the header is 8-aligned.
    let mut buf = vec![0u64; (SUBFLOW_DATA_BYTES + MAX_SUBFLOWS * elem).div_ceil(8)];
    let mut len = (SUBFLOW_DATA_BYTES + MAX_SUBFLOWS * elem) as libc::socklen_t;
    // size_subflow_data, num_subflows (0), size_kernel (0), size_user: four __u32.
    buf[0] = u32_pair(SUBFLOW_DATA_BYTES as u32, 0);
    buf[1] = u32_pair(0, elem as u32);
    // SAFETY: the kernel writes at most `len` bytes into `buf`, which holds them.
    check(unsafe { libc::getsockopt(fd, SOL_MPTCP, opt, buf.as_mut_ptr().cast(), &mut len) })?;
    let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(parse_subflow_data(&bytes, len as usize))
}

/// Two consecutive `__u32` in memory, as one u64 word.
fn u32_pair(first: u32, second: u32) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&first.to_ne_bytes());
    bytes[4..].copy_from_slice(&second.to_ne_bytes());
    u64::from_ne_bytes(bytes)
}

/// Splits an MPTCP array option's answer: the header's subflow count and element size, and the
/// elements' bytes (at most as many as `len` holds).
fn parse_subflow_data(bytes: &[u8], len: usize) -> (usize, usize, Vec<u8>) {
    let word = |i: usize| u32::from_ne_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()) as usize;
    let (num, size_user) = (word(1), word(3));
    let len = len.min(bytes.len());
    let copied = len
        .saturating_sub(SUBFLOW_DATA_BYTES)
        .checked_div(size_user)
        .map_or(0, |room| num.min(room));
    (
        num,
        size_user,
        bytes[SUBFLOW_DATA_BYTES..SUBFLOW_DATA_BYTES + copied * size_user].to_vec(),
    )
}

/// Each subflow's TCP_INFO of an MPTCP socket, with its local IPv4 address (MPTCP_TCPINFO and
/// MPTCP_SUBFLOW_ADDRS, which list the subflows in the same order). Errs when the subflows
/// changed between the two reads.
pub fn mptcp_subflow_infos(fd: RawFd) -> io::Result<Vec<(String, TcpInfo)>> {
    let (n_addrs, addr_size, addrs) =
        mptcp_subflow_array(fd, MPTCP_SUBFLOW_ADDRS, SUBFLOW_ADDRS_BYTES)?;
    let info_size = std::mem::size_of::<RawTcpInfo>();
    let (n_infos, size_user, infos) = mptcp_subflow_array(fd, MPTCP_TCPINFO, info_size)?;
    if n_addrs != n_infos || addr_size < 8 || size_user == 0 {
        return Err(io::Error::other("MPTCP subflows changed between two reads"));
    }
    Ok(addrs
        .chunks(addr_size)
        .zip(infos.chunks(size_user))
        .map(|(a, i)| (sockaddr_in_addr(a), raw_tcp_info(i).report(i.len())))
        .collect())
}

/// The IPv4 address of a `struct sockaddr_in` (family, port, then the address), or "" for
/// another family.
fn sockaddr_in_addr(sa: &[u8]) -> String {
    let family = u16::from_ne_bytes([sa[0], sa[1]]);
    if i32::from(family) != libc::AF_INET {
        return String::new();
    }
    std::net::Ipv4Addr::new(sa[4], sa[5], sa[6], sa[7]).to_string()
}

/// A `RawTcpInfo` from the first bytes of a kernel `struct tcp_info` (the rest zero).
fn raw_tcp_info(bytes: &[u8]) -> RawTcpInfo {
    let mut raw = RawTcpInfo::default();
    let n = bytes.len().min(std::mem::size_of::<RawTcpInfo>());
    // SAFETY: RawTcpInfo is plain integers (every bit pattern valid); n bytes fit in it.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&mut raw as *mut RawTcpInfo).cast(), n)
    };
    raw
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

/// A TCP connection to `addr` whose MSS is clamped to `maxseg` before the handshake
/// (TCP_MAXSEG, tcp(7): set before connecting, it also lowers the MSS the SYN announces). The
/// kernel's MSS then leaves room for the options of every segment (12 bytes of timestamps when
/// `net.ipv4.tcp_timestamps` is on): the payload per segment is `tcpi_snd_mss`.
pub fn tcp_connect_with_maxseg(
    addr: &std::net::SocketAddr,
    maxseg: u32,
) -> Result<std::net::TcpStream, String> {
    // SAFETY: a plain socket(2); the descriptor is owned by the stream below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(format!("socket: {}", io::Error::last_os_error()));
    }
    // SAFETY: fd is a fresh socket nothing else owns; the stream closes it (also on error).
    let stream = unsafe { std::net::TcpStream::from_raw_fd(fd) };
    let value =
        libc::c_int::try_from(maxseg).map_err(|_| format!("TCP_MAXSEG {maxseg}: too large"))?;
    // SAFETY: the option value is a c_int and its size.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map_err(|e| format!("TCP_MAXSEG {maxseg}: {e}"))?;
    let sa = sockaddr(addr)?;
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: sa is a valid sockaddr_in of `len` bytes.
    if unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) } < 0 {
        return Err(format!("connect {addr}: {}", io::Error::last_os_error()));
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_read_writes_only_the_packets_bytes() {
        use std::os::unix::net::UnixDatagram;
        // A datagram socket reads like a TUN device: one read, one packet.
        let (tx, rx) = UnixDatagram::pair().unwrap();
        rx.set_nonblocking(true).unwrap();
        // A recycled buffer: 64 KiB of 0xaa once written, then emptied (its capacity stays).
        let mut buf = vec![0xaau8; 65536];
        buf.clear();
        let packet: Vec<u8> = (0..1500u32).map(|i| (i % 251) as u8).collect();
        tx.send(&packet).unwrap();
        assert_eq!(read_packet(&rx, &mut buf, 65536).unwrap(), 1500);
        assert_eq!(buf, packet);
        // Nothing past the packet was written (no 64 KiB zero-fill per packet): the rest of
        // the capacity still holds the old bytes.
        assert!(buf.capacity() >= 65536);
        // SAFETY: all 65536 bytes were initialised above (a truncated Vec keeps them).
        let whole = unsafe { std::slice::from_raw_parts(buf.as_ptr(), 65536) };
        assert!(
            whole[1500..].iter().all(|&b| b == 0xaa),
            "the buffer was zero-filled"
        );
        // A new, empty buffer grows to the maximum; an empty device is WouldBlock.
        let mut fresh = Vec::new();
        tx.send(&packet[..40]).unwrap();
        assert_eq!(read_packet(&rx, &mut fresh, 65536).unwrap(), 40);
        assert!(fresh.capacity() >= 65536 && fresh == packet[..40]);
        let err = read_packet(&rx, &mut fresh, 65536).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(fresh.is_empty());
    }

    #[test]
    fn thread_cpu_time_grows_with_work() {
        let (user0, system0) = thread_cpu_ns();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let (user1, system1) = thread_cpu_ns();
        assert!(
            user1 + system1 > user0 + system0,
            "{user0} {system0} {user1} {system1}"
        );
    }

    #[test]
    fn ifreq_and_tcp_info_layouts() {
        assert_eq!(std::mem::size_of::<IfReqFlags>(), 40);
        // Offsets of struct tcp_info in include/uapi/linux/tcp.h: tcpi_bytes_retrans ends at
        // byte 216 (4.19+), then six __u32 (dsack_dups .. rehash), then tcpi_total_rto and
        // tcpi_total_rto_recoveries (__u16 each) and tcpi_total_rto_time (__u32), 6.7+.
        use std::mem::offset_of;
        assert_eq!(offset_of!(RawTcpInfo, total_retrans), 100);
        assert_eq!(offset_of!(RawTcpInfo, data_segs_out), 156);
        assert_eq!(offset_of!(RawTcpInfo, delivered), 192);
        assert_eq!(offset_of!(RawTcpInfo, bytes_retrans), 208);
        assert_eq!(offset_of!(RawTcpInfo, dsack_dups), 216);
        assert_eq!(offset_of!(RawTcpInfo, rehash), 236);
        assert_eq!(offset_of!(RawTcpInfo, total_rto), 240);
        assert_eq!(offset_of!(RawTcpInfo, total_rto_recoveries), 242);
        assert_eq!(offset_of!(RawTcpInfo, total_rto_time), 244);
        assert_eq!(std::mem::size_of::<RawTcpInfo>(), 248);
    }

    #[test]
    fn fields_past_the_kernels_length_are_absent_not_zero() {
        let raw = RawTcpInfo {
            total_retrans: 7,
            delivered: 900,
            bytes_sent: 1_000_000,
            total_rto: 3,
            total_rto_recoveries: 2,
            total_rto_time: 450,
            ..RawTcpInfo::default()
        };
        // A 6.1 kernel writes 236 bytes (up to tcpi_rcv_wnd; tcpi_rehash came in 6.2): no RTO
        // counters.
        let old = raw.report(236);
        assert_eq!(old.total_retrans, 7);
        assert_eq!(
            (old.delivered, old.bytes_sent),
            (Some(900), Some(1_000_000))
        );
        assert_eq!(old.total_rto, None);
        assert_eq!(old.total_rto_recoveries, None);
        assert_eq!(old.total_rto_time_ms, None);
        // A 4.19 kernel (216 bytes) has delivered and bytes_sent, not dsack_dups.
        let v419 = raw.report(216);
        assert_eq!((v419.bytes_sent, v419.dsack_dups), (Some(1_000_000), None));
        // 242 bytes cover tcpi_total_rto but not the recoveries after it.
        let cut = raw.report(242);
        assert_eq!((cut.total_rto, cut.total_rto_recoveries), (Some(3), None));
        let new = raw.report(248);
        assert_eq!(new.total_rto, Some(3));
        assert_eq!(new.total_rto_recoveries, Some(2));
        assert_eq!(new.total_rto_time_ms, Some(450));
        assert_eq!(new.info_len, 248);
    }

    #[test]
    fn mptcp_subflow_arrays_are_split_by_the_kernels_element_size() {
        // Header: size_subflow_data 16, 3 subflows, size_kernel 280, size_user 248; room
        // (len) for two elements only.
        let mut bytes = Vec::new();
        for w in [16u32, 3, 280, 248] {
            bytes.extend(w.to_ne_bytes());
        }
        let first = RawTcpInfo {
            state: 1,
            total_retrans: 4,
            total_rto: 2,
            ..RawTcpInfo::default()
        };
        let raw = |r: &RawTcpInfo| {
            // SAFETY: RawTcpInfo is plain integers, 248 bytes.
            unsafe {
                std::slice::from_raw_parts((r as *const RawTcpInfo).cast::<u8>(), 248).to_vec()
            }
        };
        bytes.extend(raw(&first));
        bytes.extend(raw(&RawTcpInfo::default()));
        let (num, size, elems) = parse_subflow_data(&bytes, 16 + 2 * 248);
        assert_eq!((num, size, elems.len()), (3, 248, 2 * 248));
        let info = raw_tcp_info(&elems[..248]).report(248);
        assert_eq!((info.total_retrans, info.total_rto), (4, Some(2)));
        // A kernel whose struct is shorter than ours: its size, and no RTO counters.
        let short = raw_tcp_info(&elems[..232]).report(232);
        assert_eq!((short.total_retrans, short.total_rto), (4, None));
        // An IPv4 sockaddr_in: family, port, address.
        let mut sa = vec![0u8; 128];
        sa[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        sa[4..8].copy_from_slice(&[10, 99, 201, 1]);
        assert_eq!(sockaddr_in_addr(&sa), "10.99.201.1");
        assert_eq!(sockaddr_in_addr(&[0u8; 128]), "");
    }

    #[test]
    fn subflow_infos_of_an_mptcp_loopback_connection() {
        // Needs MPTCP in this kernel and net.mptcp.enabled (the default) in this namespace.
        let addr: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
        let Ok(listener) = mptcp_listen(&addr) else {
            eprintln!("skipped: no MPTCP here");
            return;
        };
        let peer = listener.local_addr().unwrap();
        let mut client = mptcp_connect(&peer).unwrap();
        let (_server, _) = listener.accept().unwrap();
        std::io::Write::write_all(&mut client, &[0u8; 10_000]).unwrap();
        let subflows = mptcp_subflow_infos(client.as_raw_fd()).unwrap();
        assert_eq!(subflows.len(), 1, "{subflows:?}");
        let (local, info) = &subflows[0];
        assert_eq!(local, "127.0.0.1");
        assert_eq!(info.state, 1);
        assert!(info.info_len >= 104 && info.data_segs_out >= 1, "{info:?}");
    }

    #[test]
    fn tcp_info_of_a_loopback_connection_reads_this_kernels_struct() {
        // Loopback exists in every network namespace: no privileges needed.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(addr).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let info = tcp_info(client.as_raw_fd()).unwrap();
        assert_eq!(info.state, 1); // TCP_ESTABLISHED
        assert!(info.info_len >= 104, "{info:?}");
        assert!(info.info_len <= 248);
        assert_eq!(info.total_retrans, 0);
        // The kernel's length decides: a 6.7+ kernel gives tcpi_total_rto, an older one not.
        assert_eq!(info.total_rto.is_some(), info.info_len >= 242, "{info:?}");
        if let Some(rto) = info.total_rto {
            assert_eq!(rto, 0);
        }
    }
}
