/*
 * kernels.cu -- the one kernel 'paraplan calibrate' needs of its own: a streaming read-write
 * over a buffer (each element read once and written once), for HBM bandwidth beside
 * cudaMemcpy's device-to-device copy.  Built with nvcc only where configure found it; the
 * launcher is plain C for calibrate/gpu.c.
 */
#include <cuda_runtime.h>
#include <stddef.h>

/* x = x * a + b on float4s: 16-byte loads and stores, a grid-stride loop over the buffer. */
__global__ void
cal_readwrite_kernel(float4 *x, size_t n, float a, float b)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float4 v = x[i];
		v.x = v.x * a + b;
		v.y = v.y * a + b;
		v.z = v.z * a + b;
		v.w = v.w * a + b;
		x[i] = v;
	}
}

extern "C" int
cal_readwrite_launch(void *buf, size_t bytes, void *stream)
{
	int dev = 0, sms = 0;
	cudaError_t e = cudaGetDevice(&dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if (e != cudaSuccess)
		return (int)e;
	/* Enough resident blocks to keep every SM's memory pipeline full. */
	cal_readwrite_kernel<<<sms * 8, 512, 0, (cudaStream_t)stream>>>((float4 *)buf, bytes / sizeof(float4), 1.0000001f,
									  1e-7f);
	return (int)cudaGetLastError();
}
