// SPDX-License-Identifier: GPL-2.0
// A JavaScript chain 13 frames deep, j1 -> j2 -> ... -> j12 -> leaf, whose
// leaf reads /dev/zero in a loop (fs.readSync: node's own JavaScript, its
// C++ binding, libuv, read()). jit_node.sh profiles it; argv[2] is the
// number of rounds of 20 reads of 1 MiB (most of node's time under QEMU
// is its start otherwise).
'use strict';
const fs = require('fs');
const fd = fs.openSync('/dev/zero', 'r');
const buf = Buffer.alloc(1 << 20);
let total = 0;

function leaf(k) {
	for (let i = 0; i < k; i++)
		total += fs.readSync(fd, buf, 0, buf.length, null);
}
function j12(k) { leaf(k); }
function j11(k) { j12(k); }
function j10(k) { j11(k); }
function j9(k) { j10(k); }
function j8(k) { j9(k); }
function j7(k) { j8(k); }
function j6(k) { j7(k); }
function j5(k) { j6(k); }
function j4(k) { j5(k); }
function j3(k) { j4(k); }
function j2(k) { j3(k); }
function j1(k) { j2(k); }

const rounds = Number(process.argv[2] || 100);
for (let r = 0; r < rounds; r++)
	j1(20);
console.log('jit_node: ' + total + ' bytes read');
