//! The client side of the echo tests (`tests/net.rs`, `tests/net_workers_drive.rs`), whose
//! server is `examples/echo_server.rs`.

use std::io;
use std::net::{Shutdown, SocketAddr};

use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::TcpStream;

/// Sends `data` to the echo server at `addr` while reading the echo, then closes its sending
/// side and reads to the end. Returns the client's own address and everything echoed.
pub async fn echo_client(addr: SocketAddr, data: Vec<u8>) -> io::Result<(SocketAddr, Vec<u8>)> {
    let stream = TcpStream::connect(addr).await?;
    let local = stream.get_ref().local_addr()?;
    let (mut reader, mut writer) = (&stream, &stream);
    let send = async {
        writer.write_all(&data).await?;
        stream.get_ref().shutdown(Shutdown::Write)
    };
    let receive = async {
        let mut echoed = Vec::with_capacity(data.len());
        reader.read_to_end(&mut echoed).await?;
        Ok::<_, io::Error>(echoed)
    };
    let (sent, echoed) = futures::join!(send, receive);
    sent?;
    Ok((local, echoed?))
}
