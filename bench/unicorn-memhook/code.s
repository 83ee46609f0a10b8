.intel_syntax noprefix
.globl _start
_start:
	mov rax, [rdi]
	add rax, [rdi+8]
	mov [rsi], rax
	add qword ptr [rsi+8], 1
	lock add qword ptr [rsi+16], 1
	xchg rax, [rsi+24]
	lock cmpxchg [rsi+32], rcx
	push rax
	pop rbx
	movdqu xmm0, [rdi+16]
	movdqu [rsi+48], xmm0
	movaps xmm1, [rdi+64]
	call 1f
1:	lea rax, [rip+2f]
	push rax
	ret
2:	rep movsb
	inc rax
	mov [rsi+100], eax
	nop
