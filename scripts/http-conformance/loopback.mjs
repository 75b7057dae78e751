// Preloaded into the suite's origin server (node --import): a listen() given only a port
// binds 127.0.0.1 instead of every interface, as this project's servers must.
import net from 'node:net'

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') && typeof args[1] !== 'string') {
    args.splice(1, 0, '127.0.0.1')
  }
  return listen.apply(this, args)
}
