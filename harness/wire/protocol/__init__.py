"""The table wire protocol (docs/protocol.md): messages, codec, link layer (ACK, retransmission, HB)."""
