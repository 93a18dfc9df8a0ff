/// The libpq `connect_timeout` of every connection string the harnesses build (keyword form,
/// appended: later keywords win over the client's 5 s). No test means a connect deadline, and
/// machines stall: a run beside two release builds once took longer than 5 s to connect, and in
/// another the host starved the VM's CPUs for over a minute (the kernel logged an RCU stall),
/// so connects in flight passed a 120 s deadline on waking.
public enum HarnessConnectTimeout {
    public static let keyword = "connect_timeout=600"
}
